import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  FIELDS,
  FUNCTIONS,
  MAGIC_FIREWALL_FIELDS,
  MAGIC_FIREWALL_FUNCTIONS,
  RESPONSE_PHASES,
  TRANSFORM_PHASES,
  buildScheme,
  editDistance,
  httpScheme,
  magicFirewallScheme,
  phaseAllows,
  planAllows,
  planRank,
  suggestNames,
} from '../../../server/src/language/scheme/index';
import { COUNTRY_CODES, ISO_COUNTRY_CODES } from '../../../server/src/language/scheme/values';
import { PHASES, PLANS } from '../../../server/src/language/scheme/types';
import type { FunctionDef } from '../../../server/src/language/scheme/types';
import { BOOL, BYTES, INT, IP, arrayOf, mapOf, parseType, sameType, typeToString } from '../../../server/src/language/types';
import type { Type } from '../../../server/src/language/types';

// The field catalog (§4.1–§4.11) and function table (§5) of the Rules language reference,
// kept as the project's own fixture: the scheme must list exactly these.
interface RefField {
  name: string;
  /** The type the reference states for this name. */
  type: string | null;
  section: string;
}
const CATALOG = JSON.parse(readFileSync(new URL('../../fixtures/scheme/reference-catalog.json', import.meta.url), 'utf8')) as {
  fields: RefField[];
  functions: string[];
};
const referenceFields = (): RefField[] => CATALOG.fields;
const referenceFunctions = (): string[] => CATALOG.functions;

/** Reference names deliberately not in the HTTP scheme, and why. */
const EXCLUDED_FIELDS: Record<string, string> = {
  'cf.zone.name': 'third-party scheme only (account-level rules), unverified',
  'cf.zone.plan': 'third-party scheme only (account-level rules), unverified',
};
const EXCLUDED_FUNCTIONS: Record<string, string> = {
  any: 'a quantifier in the grammar, not a function',
  all: 'a quantifier in the grammar, not a function',
  bit_slice: 'network-layer scheme only (MAGIC_FIREWALL_FUNCTIONS)',
};

// ----- 1. completeness ------------------------------------------------------------------

test('every field of reference §4.1–§4.11 is in the HTTP scheme, with the stated type', () => {
  const refs = referenceFields();
  // Guard the extraction itself: a broken parser would find (almost) nothing.
  assert.ok(refs.length > 170, `only ${refs.length} fields extracted`);
  for (const expected of ['cf.waf.score.xss', 'http.request.jwt.claims.nbf.sec', 'http.request.jwt.claims.exp.sec.names', 'cf.tls_client_auth.cert_chain_rfc9440', 'ip.geoip.is_in_european_union', 'true']) {
    assert.ok(refs.some((r) => r.name === expected), `extraction missed ${expected}`);
  }
  // Every extracted name carries the type its row (or inline note) states, except the
  // §4.4 row whose type column is a note, if any: the type comparison below is real.
  const untyped = refs.filter((r) => !r.type && !(r.name in EXCLUDED_FIELDS)).map((r) => r.name);
  assert.deepEqual(untyped, []);
  const missing: string[] = [];
  for (const ref of refs) {
    if (ref.name in EXCLUDED_FIELDS) {
      assert.ok(!httpScheme.fields.has(ref.name), `${ref.name} is excluded but present`);
      continue;
    }
    const def = httpScheme.fields.get(ref.name);
    if (!def) {
      missing.push(`${ref.name} (§${ref.section})`);
      continue;
    }
    if (ref.type) {
      assert.equal(typeToString(def.type), typeToString(parseType(ref.type)), `type of ${ref.name}`);
    }
  }
  assert.deepEqual(missing, []);
});

test('the HTTP scheme has no field the reference does not list', () => {
  const listed = new Set(referenceFields().map((r) => r.name));
  // Managed-only CRS variables (scheme/managed.ts) are not part of the public reference.
  const extra = [...httpScheme.fields.values()].filter((f) => !f.managedOnly && !listed.has(f.name)).map((f) => f.name);
  assert.deepEqual(extra, []);
});

test('every function of reference §5 is in the HTTP scheme (except the documented exclusions)', () => {
  const refs = referenceFunctions();
  assert.ok(refs.length >= 30, `only ${refs.length} functions extracted`);
  const missing = refs.filter((n) => !(n in EXCLUDED_FUNCTIONS) && !httpScheme.functions.has(n));
  assert.deepEqual(missing, []);
  for (const n of Object.keys(EXCLUDED_FUNCTIONS)) assert.ok(!httpScheme.functions.has(n), `${n} should not be a function`);
  assert.ok(magicFirewallScheme.functions.has('bit_slice'));
  const extra = [...httpScheme.functions.values()].filter((f) => !f.managedOnly && !refs.includes(f.name)).map((f) => f.name);
  assert.deepEqual(extra, []);
});

test('the network-layer fields of §4.12 are separate', () => {
  const names = MAGIC_FIREWALL_FIELDS.map((f) => f.name);
  for (const n of ['tcp.flags.syn', 'ip.dst', 'icmp.type', 'udp.dstport', 'cf.colo.name', 'sip', 'ip.proto']) {
    assert.ok(names.includes(n), n);
  }
  for (const n of ['tcp.flags.syn', 'ip.dst', 'icmp', 'udp.dstport', 'sip']) assert.ok(!httpScheme.fields.has(n), n);
  assert.equal(names.length, 32);
  assert.equal(MAGIC_FIREWALL_FUNCTIONS.length, 1);
});

// ----- 2. exact expectations ------------------------------------------------------------

test('scheme entries: types, plans, phases, deprecation, values', () => {
  const f = (n: string) => {
    const d = httpScheme.fields.get(n);
    assert.ok(d, n);
    return d;
  };
  const type = (n: string): string => typeToString(f(n).type);

  assert.equal(type('http.request.uri.args'), 'Map<Array<Bytes>>');
  assert.equal(type('http.request.body.multipart.names'), 'Array<Array<Bytes>>');
  assert.equal(type('cf.llm.prompt.custom_topic_categories'), 'Map<Int>');
  assert.equal(type('http.request.jwt.claims.iat.sec.values'), 'Array<Int>');
  assert.equal(type('http.request.jwt.claims.exp.sec'), 'Map<Array<Int>>');
  assert.equal(type('http.request.jwt.claims.exp.sec.names'), 'Array<Bytes>');
  assert.equal(type('ip.src'), 'Ip');
  assert.equal(type('cf.response.1xxx_code'), 'Int');
  assert.equal(type('true'), 'Bool');

  assert.equal(f('http.request.cookies').plan, 'pro');
  assert.equal(f('ip.src.subdivision_1_iso_code').plan, 'business');
  assert.equal(f('cf.waf.score.class').plan, 'business');
  assert.equal(f('cf.waf.credential_check.username_and_password_leaked').plan, 'pro');
  assert.equal(f('http.request.body.raw').plan, 'enterprise');
  assert.equal(f('http.request.body.mime').plan, undefined);
  assert.equal(f('cf.bot_management.score').plan, 'enterprise');
  assert.equal(f('cf.bot_management.score').planNote, 'Bot Management add-on');
  assert.equal(f('cf.client.bot').plan, undefined);
  assert.equal(f('http.host').plan, undefined);

  assert.deepEqual(f('http.response.code').phases, RESPONSE_PHASES);
  assert.deepEqual(f('raw.http.response.headers').phases, RESPONSE_PHASES);
  assert.deepEqual(f('cf.response.error_type').phases, ['http_response_headers_transform', 'http_custom_errors']);
  assert.deepEqual(f('http.request.accepted_languages').phases, TRANSFORM_PHASES);
  assert.deepEqual(f('ip.src.timezone.name').phases, TRANSFORM_PHASES);
  assert.equal(f('http.request.uri.path').phases, undefined);
  for (const p of ['http_response_headers_transform', 'http_custom_errors', 'http_response_compression', 'http_response_firewall_managed', 'http_log_custom_fields'] as const) {
    assert.ok(RESPONSE_PHASES.includes(p), p);
  }
  assert.ok(!RESPONSE_PHASES.includes('http_request_firewall_custom'));
  // A rate limiting rule is matched before the request goes on; only its counting expression reads the answer.
  assert.ok(!RESPONSE_PHASES.includes('http_ratelimit'));

  assert.deepEqual(f('ip.geoip.country').deprecated, { replacement: 'ip.src.country' });
  assert.equal(type('ip.geoip.asnum'), 'Int');
  assert.equal(type('ip.geoip.is_in_european_union'), 'Bool');
  assert.equal(f('ip.geoip.subdivision_2_iso_code').plan, 'business');
  assert.equal(f('ip.src.country').deprecated, undefined);
  const deprecated = FIELDS.filter((d) => d.deprecated).map((d) => d.name).sort();
  assert.deepEqual(deprecated, [
    'ip.geoip.asnum',
    'ip.geoip.continent',
    'ip.geoip.country',
    'ip.geoip.is_in_european_union',
    'ip.geoip.subdivision_1_iso_code',
    'ip.geoip.subdivision_2_iso_code',
  ]);
  for (const d of FIELDS) if (d.deprecated) assert.ok(httpScheme.fields.has(d.deprecated.replacement), d.name);

  assert.deepEqual(f('http.request.method').values, ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH', 'PURGE']);
  assert.deepEqual(f('http.request.version').values, ['HTTP/1.0', 'HTTP/1.1', 'HTTP/2', 'HTTP/3']);
  assert.deepEqual(f('ip.src.continent').values, ['AF', 'AN', 'AS', 'EU', 'NA', 'OC', 'SA', 'T1']);
  assert.deepEqual(f('cf.tls_version').values, ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3', 'SSLv3']);
  assert.deepEqual(f('cf.waf.score.class').values, ['attack', 'likely_attack', 'likely_clean', 'clean']);
  assert.ok(f('cf.verified_bot_category').values?.includes('Search Engine Crawler'));
  assert.ok(f('cf.response.error_type').values?.includes('managed_challenge'));
  assert.ok(f('cf.llm.prompt.pii_categories').values?.includes('US_SSN'));
  assert.equal(f('cf.llm.prompt.unsafe_topic_categories').values?.length, 14);
  assert.ok(f('ip.src.country').values?.includes('T1'));
  assert.ok(f('ip.src.country').values?.includes('DE'));
  assert.deepEqual(f('ip.geoip.country').values, f('ip.src.country').values);

  assert.match(f('http.response.headers.truncated').doc, /not in Cloudflare's field index; seen in third-party schemes/);
  assert.match(f('http.request.jwt.claims.exp.sec').doc, /not in Cloudflare's field index/);
  assert.doesNotMatch(f('http.request.jwt.claims.iat.sec').doc, /third-party/);
});

test('country codes: 249 ISO 3166-1 alpha-2 codes, no duplicates, plus T1', () => {
  assert.equal(ISO_COUNTRY_CODES.length, 249);
  assert.equal(new Set(COUNTRY_CODES).size, COUNTRY_CODES.length);
  assert.deepEqual([...ISO_COUNTRY_CODES].sort(), ISO_COUNTRY_CODES);
  const names = new Intl.DisplayNames(['en'], { type: 'region' });
  for (const code of ISO_COUNTRY_CODES) {
    assert.match(code, /^[A-Z]{2}$/);
    // ICU knows every assigned region code; an unknown code comes back unchanged.
    assert.notEqual(names.of(code), code, `${code} is not a region code`);
  }
  assert.ok(COUNTRY_CODES.includes('T1'));
});

test('every field and function entry is well formed', () => {
  for (const d of [...FIELDS, ...MAGIC_FIREWALL_FIELDS]) {
    assert.match(d.name, /^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/, d.name);
    assert.ok(d.doc.length > 10 && !d.doc.includes('\n'), `doc of ${d.name}`);
    if (d.plan) assert.ok(PLANS.includes(d.plan), d.name);
    for (const p of d.phases ?? []) assert.ok((PHASES as readonly string[]).includes(p), `${d.name}: ${p}`);
  }
  for (const fn of [...FUNCTIONS, ...MAGIC_FIREWALL_FUNCTIONS]) {
    assert.ok(fn.signature.startsWith(`${fn.name}(`), fn.name);
    assert.match(fn.signature, /\) -> \S/, fn.name);
    assert.ok(fn.doc.length > 10 && !fn.doc.includes('\n'), `doc of ${fn.name}`);
    assert.ok(fn.minArgs >= 1 && fn.minArgs <= fn.maxArgs, fn.name);
    const variadic = fn.params.some((p) => p.variadic);
    if (variadic) assert.equal(fn.maxArgs, Infinity, fn.name);
    else assert.equal(fn.maxArgs, fn.params.length, fn.name);
    const required = fn.params.filter((p) => !p.optional && !p.variadic).length;
    assert.equal(fn.minArgs, variadic ? required + 1 : required, fn.name);
    for (const p of fn.phases ?? []) assert.ok((PHASES as readonly string[]).includes(p), `${fn.name}: ${p}`);
  }
  assert.throws(() => buildScheme([...FIELDS, FIELDS[0]], []), /duplicate field/);
});

test('function entries: kinds, arity, return types, phases, plans', () => {
  const fn = (n: string): FunctionDef => {
    const d = httpScheme.functions.get(n);
    assert.ok(d, n);
    return d;
  };
  const kinds = (n: string) => fn(n).params.map((p) => p.kind);
  const ret = (n: string, args: Type[]) => typeToString(fn(n).returns(args));

  assert.equal(fn('starts_with').signature, 'starts_with(source: Bytes, prefix: Bytes) -> Bool');
  assert.deepEqual(kinds('starts_with'), ['field', 'literal']);
  assert.deepEqual(kinds('cidr'), ['field', 'literal', 'literal']);
  assert.deepEqual(kinds('is_timed_hmac_valid_v0'), ['literal', 'either', 'literal', 'either', 'literal', 'literal']);
  assert.deepEqual(kinds('lookup_json_string'), ['field', 'literal']);
  assert.deepEqual(kinds('has_key'), ['field', 'either']);
  assert.deepEqual(kinds('sha256'), ['either']);
  assert.deepEqual(kinds('is_jwt_valid'), ['literal']);

  assert.equal(ret('concat', [BYTES, BYTES]), 'Bytes');
  assert.equal(ret('concat', [arrayOf(INT), arrayOf(INT)]), 'Array<Int>');
  assert.equal(ret('coalesce', [IP, IP]), 'Ip');
  assert.equal(ret('lower', [BYTES]), 'Bytes');
  assert.equal(ret('upper', [BYTES]), 'Bytes');
  assert.equal(ret('len', [arrayOf(BYTES)]), 'Int');
  assert.equal(ret('split', [BYTES, BYTES]), 'Array<Bytes>');
  assert.equal(ret('has_key', [mapOf(INT), BYTES]), 'Bool');
  assert.equal(ret('to_string', [IP]), 'Bytes');
  assert.equal(ret('cidr', [IP, INT, INT]), 'Ip');
  assert.equal(ret('lookup_json_integer', [BYTES, BYTES]), 'Int');
  assert.ok(sameType(fn('is_timed_hmac_valid_v0').returns([]), BOOL));

  assert.deepEqual([fn('concat').minArgs, fn('concat').maxArgs], [2, Infinity]);
  assert.deepEqual(fn('concat').params[0].types, [BYTES, { anyArray: true }]);
  assert.deepEqual(fn('concat').params[1].types, [{ sameAs: 0 }]);
  assert.deepEqual([fn('split').minArgs, fn('split').maxArgs], [2, 3]);
  assert.deepEqual([fn('substring').minArgs, fn('substring').maxArgs], [2, 3]);
  assert.deepEqual([fn('lookup_json_integer').minArgs, fn('lookup_json_integer').maxArgs], [2, Infinity]);
  assert.deepEqual(fn('lookup_json_integer').params[1].types, [BYTES, INT]);
  assert.deepEqual([fn('is_timed_hmac_valid_v0').minArgs, fn('is_timed_hmac_valid_v0').maxArgs], [4, 6]);
  assert.deepEqual([fn('remove_query_args').minArgs, fn('remove_query_args').maxArgs], [2, Infinity]);
  assert.deepEqual(fn('to_string').params[0].types, [INT, BOOL, IP]);

  assert.deepEqual(fn('cidr').phases, ['http_request_firewall_custom', 'http_ratelimit']);
  assert.deepEqual(fn('cidr6').phases, ['http_request_firewall_custom', 'http_ratelimit']);
  assert.deepEqual(fn('split').phases, ['http_response_headers_transform', 'http_custom_errors']);
  for (const n of ['regex_replace', 'wildcard_replace', 'to_string', 'uuidv4', 'remove_query_args']) {
    assert.deepEqual(fn(n).phases, [...TRANSFORM_PHASES, 'http_request_dynamic_redirect'], n);
  }
  assert.equal(fn('lower').phases, undefined);
  assert.equal(fn('is_timed_hmac_valid_v0').plan, 'pro');
  assert.equal(fn('regex_replace').oncePerExpression, true);
  assert.equal(fn('wildcard_replace').oncePerExpression, true);
  assert.equal(fn('concat').oncePerExpression, undefined);
});

test('plan and phase helpers', () => {
  assert.deepEqual(PLANS.map(planRank), [0, 1, 2, 3]);
  assert.equal(planAllows(undefined, 'free'), true);
  assert.equal(planAllows('pro', 'free'), false);
  assert.equal(planAllows('pro', 'pro'), true);
  assert.equal(planAllows('business', 'enterprise'), true);
  assert.equal(planAllows('enterprise', 'business'), false);

  const code = httpScheme.fields.get('http.response.code')!;
  assert.equal(phaseAllows(code, 'http_response_headers_transform'), true);
  assert.equal(phaseAllows(code, 'http_request_firewall_custom'), false);
  assert.equal(phaseAllows(code), true);
  assert.equal(phaseAllows(httpScheme.fields.get('http.host')!, 'http_request_firewall_custom'), true);
  assert.equal(phaseAllows(httpScheme.functions.get('cidr')!, 'http_request_transform'), false);
});

// ----- 3. did you mean ------------------------------------------------------------------

test('suggestNames', () => {
  const cases: Array<[string, string[]]> = [
    ['HTTP.HOST', ['http.host']],
    ['Http.Request.Method', ['http.request.method']],
    ['http.request.uri.paths', ['http.request.uri.path']],
    ['http.hots', ['http.host']],
    ['ip.geoip.city', ['ip.src.city']],
    ['ip.geoip.contry', ['ip.src.country']],
    ['ip.geoip.country', ['ip.src.country']],
    ['ip.src.asn', ['ip.src.asnum']],
    ['startsWith', ['starts_with']],
    ['base64_decode', ['decode_base64']],
    ['http.useragent', ['http.user_agent']],
    ['user_agent', ['http.user_agent']],
    ['http.request.uri.path.ext', ['http.request.uri.path.extension']],
    ['lookup_json_str', ['lookup_json_string']],
    ['regex_replce', ['regex_replace']],
    ['tolower', ['lower']],
    ['cf.bot_score', ['cf.bot_management.score']],
    ['http.response.status', ['http.response.code']],
    ['cf.tls_client_auth.cert_verifed', ['cf.tls_client_auth.cert_verified']],
    ['sls', ['ssl']],
    ['zzzzzz', []],
    ['http.host', []],
  ];
  for (const [input, expected] of cases) assert.deepEqual(suggestNames(input, httpScheme), expected, input);

  assert.deepEqual(suggestNames('uri.path', httpScheme), ['http.request.uri.path', 'raw.http.request.uri.path']);
  assert.equal(suggestNames('http.request', httpScheme).length, 3);
  assert.equal(suggestNames('http.request', httpScheme, 1).length, 1);
  assert.deepEqual(suggestNames('http.request.cookie', httpScheme).slice(0, 2).sort(), ['http.cookie', 'http.request.cookies']);

  assert.equal(editDistance('kitten', 'sitting'), 3);
  assert.equal(editDistance('ab', 'ba'), 1);
  assert.equal(editDistance('', 'abc'), 3);
  assert.ok(editDistance('abcdef', 'uvwxyz', 2) > 2);
});

// ----- 4. literal validation ------------------------------------------------------------

test('validateLiteral messages', () => {
  const check = (n: string, i: number, v: unknown) => {
    const fn = httpScheme.functions.get(n) ?? magicFirewallScheme.functions.get(n);
    assert.ok(fn?.validateLiteral, n);
    return fn.validateLiteral(i, v);
  };
  const bytes = (s: string) => new TextEncoder().encode(s);

  assert.equal(check('split', 2, 0), 'split limit must be between 1 and 128');
  assert.equal(check('split', 2, 129n), 'split limit must be between 1 and 128');
  assert.equal(check('split', 2, 1), undefined);
  assert.equal(check('split', 2, 128n), undefined);
  assert.equal(check('split', 1, ''), 'split separator must not be empty');
  assert.equal(check('split', 1, bytes('')), 'split separator must not be empty');
  assert.equal(check('split', 1, ','), undefined);

  assert.equal(check('cidr', 1, 0), 'cidr v4_bits must be between 1 and 32');
  assert.equal(check('cidr', 1, 33), 'cidr v4_bits must be between 1 and 32');
  assert.equal(check('cidr', 1, 24), undefined);
  assert.equal(check('cidr', 2, 129), 'cidr v6_bits must be between 1 and 128');
  assert.equal(check('cidr', 2, 64), undefined);
  assert.equal(check('cidr6', 1, 0), 'cidr6 v6_bits must be between 1 and 128');
  assert.equal(check('cidr6', 1, 48n), undefined);

  assert.equal(check('url_decode', 1, 'ur'), undefined);
  assert.equal(check('url_decode', 1, 'r'), undefined);
  assert.equal(check('url_decode', 1, 'x'), 'url_decode options may only contain the letters r and u');
  assert.equal(check('url_decode', 1, bytes('uR')), 'url_decode options may only contain the letters r and u');

  assert.equal(check('encode_base64', 1, 'up'), undefined);
  assert.equal(check('encode_base64', 1, 's'), 'encode_base64 flags may only contain the letters u and p');

  assert.equal(check('wildcard_replace', 3, 's'), undefined);
  assert.equal(check('wildcard_replace', 3, 'i'), 'wildcard_replace flags may only contain the letter s');
  assert.equal(check('wildcard_replace', 1, 'i'), undefined);

  assert.equal(check('is_timed_hmac_valid_v0', 5, 's'), undefined);
  assert.equal(check('is_timed_hmac_valid_v0', 5, 'u'), 'is_timed_hmac_valid_v0 flags may only contain the letter s');
  assert.equal(check('is_timed_hmac_valid_v0', 2, -1), 'is_timed_hmac_valid_v0 ttl must not be negative');
  assert.equal(check('is_timed_hmac_valid_v0', 4, -1n), 'is_timed_hmac_valid_v0 separator length must not be negative');
  assert.equal(check('is_timed_hmac_valid_v0', 2, 300), undefined);

  assert.equal(check('bit_slice', 1, 2041), 'bit_slice offset_start must be between 0 and 2040');
  assert.equal(check('bit_slice', 2, 16), undefined);

  // Messages never contain double quotes: the checker wraps them in "…".
  for (const fn of [...FUNCTIONS, ...MAGIC_FIREWALL_FUNCTIONS]) {
    for (let i = 0; i < 6; i++) {
      for (const v of [-5, 0, 999, '', 'zz']) {
        const msg = fn.validateLiteral?.(i, v);
        if (msg !== undefined) assert.ok(!msg.includes('"'), `${fn.name}: ${msg}`);
      }
    }
  }
});
