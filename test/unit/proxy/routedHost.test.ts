// The rules of a proxied zone see the host that chose the zone: a trailing dot, upper case
// or `.localhost` cannot spell the host past a host rule.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { asRouted } from '../../../server/src/proxy/evaluateLive';
import { canonicalHost, hostName, routeFor } from '../../../server/src/proxy/zones';
import { liveSampleRequest, type LiveRequest } from '../../../server/src/requests/live';
import { requestFields } from '../../../server/src/requests/fields';

const routes = [{ zoneId: '1', zoneName: 'example.com', upstream: new URL('http://127.0.0.1:1') }];

function live(target: string, rawHeaders: string[]): LiveRequest {
  return { method: 'GET', target, httpVersion: '1.1', rawHeaders, body: '', bodySize: 0, edge: {} };
}

/** The host fields the rules get for the request as the proxy evaluates it. */
function hostFields(l: LiveRequest): unknown[] {
  const { fields } = requestFields(liveSampleRequest(asRouted(l)));
  return [fields['http.host'], fields['http.request.full_uri'], (fields['http.request.headers'] as Record<string, unknown>)['host']];
}

describe('the canonical host', () => {
  it('is the host that chose the zone, with the port kept', () => {
    const spellings = ['admin.example.com', 'ADMIN.Example.COM', 'admin.example.com.', 'admin.example.com.localhost', 'admin.example.com.localhost.:8081', ' admin.example.com:8081 '];
    assert.deepEqual(spellings.map(canonicalHost), ['admin.example.com', 'admin.example.com', 'admin.example.com', 'admin.example.com', 'admin.example.com:8081', 'admin.example.com:8081']);
    assert.deepEqual(new Set(spellings.map((h) => routeFor(routes, hostName(h))?.zoneId)), new Set(['1']));
    assert.deepEqual(['[::1]:80', '[::1]', '', 'a.test:'].map(canonicalHost), ['[::1]:80', '[::1]', '', 'a.test:']);
    // Only ASCII is lower-cased: the header is a binary string, its other bytes are UTF-8 the rules decode.
    assert.equal(canonicalHost('\xc3\x80.Example.com'), '\xc3\x80.example.com');
  });
});

describe('the request as the rules see it', () => {
  it('gives http.host, full_uri and the Host header as the canonical host', () => {
    assert.deepEqual(hostFields(live('/a?b=1', ['Host', 'Admin.Example.COM.localhost.:8081', 'X-A', '1'])), [
      'admin.example.com',
      'http://admin.example.com:8081/a?b=1',
      ['admin.example.com:8081'],
    ]);
    assert.deepEqual(hostFields(live('/', ['host', 'admin.example.com.'])), ['admin.example.com', 'http://admin.example.com/', ['admin.example.com']]);
  });

  it('routes by the first Host header, as Node does, and leaves the others as sent', () => {
    assert.deepEqual(asRouted(live('/', ['HOST', 'a.example.com.', 'Host', 'B.example.com.'])).rawHeaders, ['HOST', 'a.example.com', 'Host', 'B.example.com.']);
  });

  it('leaves the rest of the request as it came', () => {
    const l = live('/x', ['Host', 'example.com', 'X-A', '1']);
    assert.deepEqual(asRouted(l), l);
    assert.notEqual(asRouted(l).rawHeaders, l.rawHeaders);
  });
});
