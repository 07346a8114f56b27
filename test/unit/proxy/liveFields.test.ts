// The WAF proxy builds only the fields a zone reads (CompiledZone.fieldsRead, requests/fields.ts
// `only`): an OWASP-only zone builds no header or argument maps. Leaving a field out must never
// change a verdict, a trace or a rate-limit count.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { yamlFiles } from '../../../server/src/corpusFiles';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { setParanoiaLevel, setScoreThreshold } from '../../../server/src/managed/preview';
import { evaluateLive, type LiveJob } from '../../../server/src/proxy/evaluateLive';
import { RateLimiter } from '../../../server/src/proxy/rateLimit';
import { requestValues } from '../../../server/src/requests/fields';
import { parseFtwFile } from '../../../server/src/requests/ftw';
import type { SampleRequest } from '../../../server/src/requests/types';
import { compileZone, type ZoneConfig } from '../../../server/src/rulesets/engine';
import { OWASP_RULESET_ID } from '../../../server/src/rulesets/managedIds';
import type { Rule } from '../../../server/src/rulesets/model';

const ID = 'e'.repeat(32);
const ratelimit = { characteristics: ['ip.src', 'http.request.headers["x-api-key"]'], period: 60, requests_per_period: 2, mitigation_timeout: 60, counting_expression: 'http.request.uri.path eq "/login"' };

/** Custom rules reading the host and one argument; a rate limit counting logins per client and API key. */
const custom: ZoneConfig = {
  catalog: defaultCatalog,
  entryPoints: {
    http_request_firewall_custom: { id: ID, phase: 'http_request_firewall_custom', rules: [{ id: 'r1', expression: 'http.host eq "shop.example" and any(http.request.uri.args["debug"][*] eq "1")', action: 'block' }] },
    http_ratelimit: { id: 'f'.repeat(32), phase: 'http_ratelimit', rules: [{ id: 'r2', expression: 'http.request.method eq "POST"', action: 'block', ratelimit }] },
  },
};

function owasp(level: 1 | 4): ZoneConfig {
  let execute: Rule = { id: 'x', expression: 'true', action: 'execute', action_parameters: { id: OWASP_RULESET_ID } };
  execute = setScoreThreshold(setParanoiaLevel(execute, level), 5, undefined, { catalog: defaultCatalog });
  return { catalog: defaultCatalog, entryPoints: { http_request_firewall_managed: { id: ID, phase: 'http_request_firewall_managed', rules: [execute] } } };
}

function job(method: string, target: string, rawHeaders: string[]): LiveJob {
  return { zoneId: 'z', bodyLimit: 128 * 1024, cleared: false, live: { method, target, httpVersion: '1.1', rawHeaders: ['Host', 'shop.example', ...rawHeaders], body: '', bodySize: 0, edge: { 'ip.src': '198.51.100.7' } } };
}

describe('the fields a compiled zone reads', () => {
  it("are its rules' fields and its rate limits' counting expression and characteristics", () => {
    const read = compileZone(custom).fieldsRead;
    assert.deepEqual([...(read ?? [])].sort(), ['http.host', 'http.request.headers', 'http.request.method', 'http.request.uri.args', 'http.request.uri.path', 'ip.src']);
  });

  it('are the crs.* fields for the OWASP ruleset', () => {
    const read = [...(compileZone(owasp(1)).fieldsRead ?? [])];
    assert.ok(read.length > 10);
    assert.deepEqual(
      read.filter((n) => !n.startsWith('crs.')),
      // The execute rule's expression is `true`.
      ['true'],
    );
  });

  it('are unknown when a previous-WAF stand-in may read any field', () => {
    assert.equal(compileZone(custom, { previousWaf: () => undefined }).fieldsRead, undefined);
  });
});

describe('requestValues with `only`', () => {
  const req: SampleRequest = { method: 'GET', url: '/a?debug=1', httpVersion: 'HTTP/1.1', headers: [['Host', 'shop.example'], ['Cookie', 'a=1']], meta: { 'cf.api_gateway.jwt_valid': '{"cfg1": true}' } };

  it('converts only the fields named, and keeps edge context the functions read', () => {
    const { values } = requestValues(req, { only: new Set(['http.host']) });
    assert.deepEqual([...values.keys()].sort(), ['cf.api_gateway.jwt_valid', 'http.host']);
    assert.equal(values.get('http.host'), 'shop.example');
    // A rule on `http.request.headers.truncated` (always false here) needs no header maps.
    assert.equal(requestValues(req, { only: new Set(['http.request.headers.truncated']) }).fields['http.request.headers'], undefined);
  });

  it('builds every field without it', () => {
    const { values } = requestValues(req);
    assert.deepEqual(values.get('http.request.cookies'), new Map([['a', ['1']]]));
  });
});

describe('a live evaluation with only the fields read', () => {
  it('counts by a header no rule reads', () => {
    const zone = { compiled: compileZone(custom) };
    const limiter = new RateLimiter(() => 0);
    const login = (key: string) => evaluateLive(zone, job('POST', '/login', ['X-Api-Key', key]), limiter).decision.action;
    // Two logins allowed per client and key in the period; the third with key A is over, key B counts apart.
    assert.deepEqual([login('A'), login('A'), login('A'), login('B')], ['allow-through', 'allow-through', 'block', 'allow-through']);
  });

  it('decides as the full fields do on every CRS regression request (PL1, whose disabled rules read nothing; PL4, the rules of every level)', () => {
    const requests: SampleRequest[] = [];
    for (const file of yamlFiles(join(__dirname, '../../fixtures/crs-3.3.4-regression-tests'))) {
      for (const t of parseFtwFile(readFileSync(file, 'utf8')).tests) if (t.enabled !== false) for (const s of t.stages) requests.push(s.request);
    }
    assert.ok(requests.length > 2000);
    for (const config of [owasp(1), owasp(4), custom]) {
      const zone = compileZone(config);
      const differ = requests.filter((r) => {
        const all = zone.evaluate(requestValues(r).values);
        const only = zone.evaluate(requestValues(r, { only: zone.fieldsRead }).values);
        return JSON.stringify(all) !== JSON.stringify(only);
      });
      assert.deepEqual(differ.map((r) => `${r.method} ${r.url}`), []);
    }
  });
});

describe('a rate limit whose ruleset runs twice for one request', () => {
  // An account's rate limiting ruleset executed by two rules of the zone's entry point (one scoped to GET, one to everything).
  const rules = (counting?: string) => [{ id: 'r1', action: 'block', expression: 'http.request.uri.path eq "/login"', ratelimit: { characteristics: ['cf.colo.id', 'ip.src'], period: 60, requests_per_period: 4, mitigation_timeout: 60, ...(counting ? { counting_expression: counting } : {}) } }];
  const twice = (counting?: string): ZoneConfig => ({
    catalog: defaultCatalog,
    plan: 'enterprise',
    entryPoints: {
      http_ratelimit: {
        id: 'f'.repeat(32),
        phase: 'http_ratelimit',
        rules: [
          { id: 'e1', action: 'execute', expression: 'http.request.method eq "GET"', action_parameters: { id: 'acct-rl' } },
          { id: 'e2', action: 'execute', expression: 'true', action_parameters: { id: 'acct-rl' } },
        ],
      },
    },
    customRulesets: [{ id: 'acct-rl', kind: 'custom', phase: 'http_ratelimit', version: '1', rules: rules(counting) } as never],
  });

  it('counts the request once: four pass, the fifth is over the limit (by its match, and by a counting expression)', () => {
    for (const counting of [undefined, 'http.request.uri.path eq "/login"']) {
      const zone = { compiled: compileZone(twice(counting)) };
      assert.deepEqual(zone.compiled.problems ?? [], []);
      const limiter = new RateLimiter(() => 0);
      const actions = Array.from({ length: 5 }, () => evaluateLive(zone, job('GET', '/login', []), limiter).decision.action);
      assert.deepEqual(actions, ['allow-through', 'allow-through', 'allow-through', 'allow-through', 'block'], counting ?? 'by its match');
    }
  });
});

describe('the fields a live evaluation lists as defaulted', () => {
  /** A custom rule reading two fields only an edge gives, one of them given here (`edge`). */
  const zone = (expression: string) => ({
    compiled: compileZone({ catalog: defaultCatalog, entryPoints: { http_request_firewall_custom: { id: ID, phase: 'http_request_firewall_custom', rules: [{ id: 'r', expression, action: 'block' }] } } }),
  });
  const withCountry = (j: LiveJob): LiveJob => ({ ...j, live: { ...j.live, edge: { ...j.live.edge, 'ip.src.country': 'DE' } } });

  it('are the edge-only fields its rules read and the request has no value for', () => {
    const z = zone('ip.src.continent eq "EU" or ip.src.country eq "DE" or cf.tls_client_auth.cert_verified or http.cookie contains "x"');
    const e = evaluateLive(z, withCountry(job('GET', '/', [])), new RateLimiter(() => 0, 10));
    assert.equal(e.decision.action, 'block');
    // Not ip.src.country (given), nor http.cookie (the request's own: it sent none).
    assert.deepEqual(e.defaultedFields, ['cf.tls_client_auth.cert_verified', 'ip.src.continent']);
    assert.deepEqual(evaluateLive(z, job('GET', '/', []), new RateLimiter(() => 0, 10)).defaultedFields, ['cf.tls_client_auth.cert_verified', 'ip.src.continent', 'ip.src.country']);
  });

  it('include the request fields only an edge parses, and leave out what disabled rules read', () => {
    const config: ZoneConfig = {
      catalog: defaultCatalog,
      entryPoints: {
        http_request_firewall_custom: {
          id: ID,
          phase: 'http_request_firewall_custom',
          rules: [
            { id: 'r1', expression: 'any(http.request.accepted_languages[*] eq "en") and http.request.uri.path eq "/en"', action: 'block' },
            { id: 'r2', expression: 'ip.src.city eq "Paris"', action: 'block', enabled: false },
          ],
        },
      },
    };
    const e = evaluateLive({ compiled: compileZone(config) }, job('GET', '/en', ['Accept-Language', 'en']), new RateLimiter(() => 0, 10));
    assert.deepEqual([e.decision.action, e.defaultedFields], ['allow-through', ['http.request.accepted_languages']]);
  });

  it('name a deprecated ip.geoip.* field by the ip.src.* field it holds, once', () => {
    const z = zone('ip.geoip.country eq "DE" or ip.src.country eq "FR" or ip.geoip.continent eq "EU"');
    assert.deepEqual(evaluateLive(z, job('GET', '/', []), new RateLimiter(() => 0, 10)).defaultedFields, ['ip.src.continent', 'ip.src.country']);
    assert.deepEqual(evaluateLive(z, withCountry(job('GET', '/', [])), new RateLimiter(() => 0, 10)).defaultedFields, ['ip.src.continent']);
  });

  it('are none for a zone that reads only request fields and the client address, as the OWASP ruleset', () => {
    assert.equal(evaluateLive(zone('http.host eq "shop.example" and ip.src in {198.51.100.0/24}'), job('GET', '/', []), new RateLimiter(() => 0, 10)).defaultedFields, undefined);
    assert.equal(evaluateLive({ compiled: compileZone(owasp(1)) }, job('GET', '/?q=<script>', []), new RateLimiter(() => 0, 10)).defaultedFields, undefined);
  });
});
