// A lone UTF-16 surrogate ("\ud800") is valid JSON but not well-formed Unicode: the store
// keeps text as UTF-8, where it reads back as U+FFFD, so what was validated and answered
// would not be what is stored. The body decoder (server/src/service/body.ts) refuses any
// string or key holding one, at its JSON pointer, before a route sees the body: nothing is
// stored. A surrogate pair (an emoji, escaped or not) is well-formed and kept exactly.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEMO_ACCOUNT, demoZoneId } from '../../server/src/service/seed';
import { startService, type TestService } from './harness';

let svc: TestService;
before(async () => {
  svc = await startService();
});
after(() => svc.close());

const ENT = demoZoneId('enterprise.example.com');
const ACCOUNT = DEMO_ACCOUNT.id;

/** Every row a refused write could have touched. */
function snapshot(): string {
  return JSON.stringify(['filters', 'firewall_rules', 'rulesets', 'ruleset_versions', 'ruleset_rules', 'previous_waf'].map((t) => svc.store.all(`SELECT * FROM ${t} ORDER BY rowid`)));
}

async function refused(method: string, path: string, rawBody: string, error: { message: string; pointer: string }): Promise<void> {
  const before = snapshot();
  const r = await svc.call(method, path, { rawBody });
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.deepEqual(r.body, { result: null, success: false, errors: [{ code: 20021, message: error.message, source: { pointer: error.pointer } }], messages: [] });
  assert.equal(snapshot(), before, 'nothing stored');
}

const value = (pointer: string, unit: string, index: number) =>
  `the value at ${pointer} must not contain a lone UTF-16 surrogate (U+${unit} at index ${index}): send a string of well-formed Unicode, a surrogate only as half of a pair`;
const key = (pointer: string, unit: string, index: number) =>
  `a key in ${pointer} must not contain a lone UTF-16 surrogate (U+${unit} at index ${index}): send keys of well-formed Unicode, a surrogate only as half of a pair`;

describe('lone UTF-16 surrogates in a body', () => {
  it('a filter expression, description or ref holding one is refused at its pointer', async () => {
    await refused('POST', `/zones/${ENT}/filters`, String.raw`[{"expression":"http.request.uri.path eq \"/a\ud800\""}]`, { message: value('/0/expression', 'D800', 28), pointer: '/0/expression' });
    await refused('POST', `/zones/${ENT}/filters`, String.raw`[{"expression":"true"},{"expression":"http.host eq \"x\"","description":"lone \udc00 low"}]`, {
      message: value('/1/description', 'DC00', 5),
      pointer: '/1/description',
    });
    // A high surrogate followed by another high one: the first is alone.
    await refused('POST', `/zones/${ENT}/filters`, String.raw`[{"expression":"true","ref":"\ud83d\ud83d\ude00"}]`, { message: value('/0/ref', 'D83D', 0), pointer: '/0/ref' });
    // At the end of the string.
    await refused('POST', `/zones/${ENT}/firewall/rules`, String.raw`[{"action":"block","filter":{"expression":"true"},"description":"end \ud83d"}]`, { message: value('/0/description', 'D83D', 4), pointer: '/0/description' });
  });

  it('a ruleset name, a rule description, a key, and the top-level value', async () => {
    const ruleset = (name: string, description = 'd') =>
      `{"name":"${name}","kind":"custom","phase":"http_request_firewall_custom","rules":[{"action":"block","expression":"http.host eq \\"a\\"","description":"${description}"}]}`;
    await refused('POST', `/accounts/${ACCOUNT}/rulesets`, ruleset(String.raw`name \udc00 x`), { message: value('/name', 'DC00', 5), pointer: '/name' });
    await refused('POST', `/accounts/${ACCOUNT}/rulesets`, ruleset('ok', String.raw`rule \ud800`), { message: value('/rules/0/description', 'D800', 5), pointer: '/rules/0/description' });
    await refused('POST', `/accounts/${ACCOUNT}/rulesets`, String.raw`{"name":"k","kind":"custom","phase":"http_request_firewall_custom","rules":[{"a\udfffb":1}]}`, { message: key('/rules/0', 'DFFF', 1), pointer: '/rules/0' });
    await refused('POST', `/zones/${ENT}/filters`, String.raw`"\ud800"`, { message: value('/', 'D800', 0), pointer: '' });
  });

  it('a surrogate pair, escaped or as UTF-8, is well-formed: stored and read back exactly', async () => {
    const r = await svc.call('POST', `/zones/${ENT}/filters`, { rawBody: String.raw`[{"expression":"http.request.uri.path eq \"/\ud83d\ude00\"","description":"😀 and \ud83d\ude00"}]` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const [created] = r.body.result;
    assert.deepEqual([created.expression, created.description], ['http.request.uri.path eq "/😀"', '😀 and 😀']);
    const read = await svc.call('GET', `/zones/${ENT}/filters/${created.id}`);
    assert.deepEqual([read.body.result.expression, read.body.result.description], ['http.request.uri.path eq "/😀"', '😀 and 😀']);
    // An escaped backslash followed by "ud800" is no surrogate at all.
    const text = await svc.call('POST', `/zones/${ENT}/filters`, { rawBody: String.raw`[{"expression":"true","description":"a \\ud800 b"}]` });
    assert.equal(text.status, 200, JSON.stringify(text.body));
    assert.equal(text.body.result[0].description, String.raw`a \ud800 b`);
  });
});
