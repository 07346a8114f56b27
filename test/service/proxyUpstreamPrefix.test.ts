// An app behind the WAF proxy under a path prefix (`--proxy ZONE=http://127.0.0.1:3000/app`),
// over real sockets: each request's path goes after the prefix with its dot segments resolved
// (as a browser resolves them, and as the rules saw the path), and a `..` encoded so that the
// app may decode it, which would take the path out of the prefix, is refused with 400 before
// the rules run and never reaches the app, for a WebSocket handshake too.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { climbsOutOfPrefix, upstreamPath } from '../../server/src/proxy/forwarding';
import { normalizeUrlPath } from '../../server/src/requests/normalize';
import { handshake, proxyTestFile, raw, ZONE } from './proxyHarness';

const file = proxyTestFile({});
const get = (target: string) => `GET ${target} HTTP/1.1\r\nHost: ${ZONE}\r\nConnection: close\r\n\r\n`;

describe('climbsOutOfPrefix', () => {
  const prefixed = new URL('http://127.0.0.1:3000/app');
  it('finds a .. segment left after the dot segments are resolved, however it is written, only under a prefix', () => {
    const targets = ['/a%2f..%2fx', '/a/%5c../x', '/..;/admin', '/%2e%2e;jsessionid=1/x', '/%252e%252e/x', '/a%252f..%252fx', '/%u002e%u002e/x', '/%U002E./x', '/a%u2215..%u2215x', '/%c0%ae%c0%ae/x', '/a%c0%af..%c0%afx', '/%e0%80%ae%e0%80%ae/x', '/%25c0%25ae%25c0%25ae/x', '/%25%32%65%25%32%65/admin', '/%%32%65%%32%65/admin', '/a%25%32%66..%25%32%66x', '/a%255c..%255cx'];
    assert.deepEqual(targets.filter((t) => climbsOutOfPrefix(prefixed, t)), targets);
    assert.deepEqual(targets.filter((t) => climbsOutOfPrefix(new URL('http://127.0.0.1:3000/'), t)), []);
  });

  it('lets through dots that are no .. segment, a .. in the query, and dot segments it resolves', () => {
    assert.deepEqual(['/a/..b/c', '/a/b../c', '/.../x', '/./x', '/x?next=/../y', '/a;..', '/%25/x', '/%u002ex/y', '/%c0%ae/x', '*', '/../x', '/a/../../x', '/%2e%2e/x', '/.%2E/x', '/..', '/a/..?q=1', '//../x', '/a\\..\\x', '/admin//../delete', '/public\\x/..'].filter((t) => climbsOutOfPrefix(prefixed, t)), []);
  });
});

describe('upstreamPath', () => {
  const prefixed = new URL('http://127.0.0.1:3000/app/');
  it('resolves dot segments under a prefix (a %2e is a dot), never above the prefix, the query as written', () => {
    const targets = ['/../x', '/a/../../x', '/%2e%2e/x', '/.%2E/x', '/..', '/a/..?q=1', '/a/./b/../c?next=/../y', '//../x', '/a/b/.'];
    assert.deepEqual(
      targets.map((t) => upstreamPath(prefixed, t)),
      ['/app/x', '/app/x', '/app/x', '/app/x', '/app/', '/app/?q=1', '/app/a/c?next=/../y', '/app/x', '/app/a/b/'],
    );
  });

  it('resolves them as the rules do: slashes merged and backslashes taken for slashes first, so a .. removes the segment the rules saw it remove', () => {
    const targets = ['/admin//../delete', '/a//..', '/public\\x/..', '/a\\..\\x', '/%41dmin/../b/%7e'];
    const rulesSaw = targets.map((t) => normalizeUrlPath(t));
    assert.deepEqual(rulesSaw, ['/delete', '/', '/public/', '/x', '/b/~']);
    assert.deepEqual(targets.map((t) => upstreamPath(prefixed, t)), rulesSaw.map((p) => `/app${p}`));
  });

  it('keeps a path with no dot segment as written, and without a prefix every path', () => {
    assert.deepEqual(['/a/..b/c', '/a%2ex/y', '/x?q=/../y', '*'].map((t) => upstreamPath(prefixed, t)), ['/app/a/..b/c', '/app/a%2ex/y', '/app/x?q=/../y', '*']);
    assert.deepEqual(['/a/../b', '/%2e%2e/x', '//x/admin'].map((t) => upstreamPath(new URL('http://127.0.0.1:3000'), t)), ['/a/../b', '/%2e%2e/x', '/x/admin']);
  });
});

describe('an app under a path prefix', () => {
  it('gets each path after the prefix', () =>
    file.withProxy({ upstream: `${file.upstream.url}/app` }, async (p) => {
      const r = await raw(p.url(), get('/a/b?c=1'));
      assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
      assert.deepEqual(file.upstream.seen.map((s) => s.url), ['/app/a/b?c=1']);
    }));

  it('gets a path with dot segments resolved within the prefix, as the rules saw it', () =>
    file.withProxy({ upstream: `${file.upstream.url}/app` }, async (p) => {
      for (const target of ['/a/../b?c=1', '/%2e%2e/admin', '/admin//../delete']) assert.match((await raw(p.url(), get(target))).data, /^HTTP\/1\.1 200 OK\r\n/);
      assert.deepEqual(file.upstream.seen.map((s) => s.url), ['/app/b?c=1', '/app/admin', '/app/delete']);
    }));

  it('never gets a path that an encoded .. would take out of the prefix: 400 from the proxy, which says why in its log', () =>
    file.withProxy({ upstream: `${file.upstream.url}/app` }, async (p, logs) => {
      const r = await raw(p.url(), get('/%252e%252e/admin'));
      assert.match(r.data, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.match(r.data, /the path has a \.\. segment encoded so that the app may decode it, and the app behind this proxy is served under a path prefix it would leave/);
      const ws = await raw(p.url(), handshake('/..;/socket', ZONE));
      assert.match(ws.data, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.deepEqual(file.upstream.seen, []);
      assert.match(logs.join('\n'), /GET \/%252e%252e\/admin 400 \(an encoded \.\. segment would take the path out of \/app, the path of the app's URL\)/);
    }));

  it('without a prefix, gets a .. path as written (the app resolves it against its own root)', () =>
    file.withProxy({}, async (p) => {
      const r = await raw(p.url(), get('/a/../b'));
      assert.match(r.data, /^HTTP\/1\.1 200 OK\r\n/);
      assert.deepEqual(file.upstream.seen.map((s) => s.url), ['/a/../b']);
    }));
});

describe('a target that begins with two slashes', () => {
  it('goes to the app with one, the path the rules saw (an app reading it as a URL would take the first segment for a host)', () =>
    file.withProxy({}, async (p) => {
      for (const target of ['//x/admin?q=1', '/\\x/admin', '///admin']) assert.match((await raw(p.url(), get(target))).data, /^HTTP\/1\.1 200 OK\r\n/);
      assert.deepEqual(file.upstream.seen.map((s) => s.url), ['/x/admin?q=1', '/x/admin', '/admin']);
    }));
});
