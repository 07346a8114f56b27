import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { prepareFields } from '../../../server/src/language/index';
import {
  DEFAULT_CLIENT_IP,
  DEFAULT_TIMESTAMP_SEC,
  edgeOnlyField,
  metaFieldValue,
  requestFields,
  requestSummary,
} from '../../../server/src/requests/fields';
import { parseHttpFile } from '../../../server/src/requests/http';
import type { SampleRequest } from '../../../server/src/requests/types';

const fixture = (name: string): SampleRequest[] => {
  const r = parseHttpFile(readFileSync(new URL(`../../fixtures/requests/${name}`, import.meta.url), 'utf8'));
  assert.deepEqual(r.problems, []);
  return r.requests;
};

/** JSON round trip: null-prototype maps become plain objects, bigints strings, for deepEqual. */
function plain(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x)));
}

function fieldsOf(req: SampleRequest, options?: Parameters<typeof requestFields>[1]): Record<string, unknown> {
  const r = requestFields(req, options);
  assert.deepEqual(r.problems, []);
  // The managed-only `crs.*` fields are tested in test/unit/managed/crsFields.test.ts.
  return Object.fromEntries(Object.entries(plain(r.fields) as Record<string, unknown>).filter(([k]) => !k.startsWith('crs.')));
}

function pick(fields: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(names.map((n) => [n, fields[n]]));
}

const req = (over: Partial<SampleRequest>): SampleRequest => ({
  method: 'GET',
  url: 'https://example.com/',
  httpVersion: 'HTTP/1.1',
  headers: [],
  meta: {},
  ...over,
});

const NO_MULTIPART = {
  'http.request.body.multipart': {},
  'http.request.body.multipart.names': [],
  'http.request.body.multipart.values': [],
  'http.request.body.multipart.content_types': [],
  'http.request.body.multipart.content_dispositions': [],
  'http.request.body.multipart.content_transfer_encodings': [],
  'http.request.body.multipart.filenames': [],
};

describe('requestFields: fixtures', () => {
  test('form-post.http: every field', () => {
    const [r] = fixture('form-post.http');
    const args = { next: ['%2Fhome'], x: ['1', '2'], flag: [''], e: [''] };
    const argNames = ['next', 'x', 'x', 'flag', 'e'];
    const argValues = ['%2Fhome', '1', '2', '', ''];
    const query = 'next=%2Fhome&x=1&x=2&flag&&e=';
    assert.deepEqual(fieldsOf(r), {
      'http.request.method': 'POST',
      'http.request.version': 'HTTP/1.1',
      'http.host': 'shop.example.com',
      'http.request.full_uri': `https://shop.example.com:8443/a/login.PHP?${query}`,
      'http.request.uri': `/a/login.PHP?${query}`,
      'http.request.uri.path': '/a/login.PHP',
      'http.request.uri.path.extension': 'php',
      'http.request.uri.query': query,
      'http.request.uri.args': args,
      'http.request.uri.args.names': argNames,
      'http.request.uri.args.values': argValues,
      'raw.http.request.full_uri': `https://shop.example.com:8443/a/./b/../login.PHP?${query}`,
      'raw.http.request.uri': `/a/./b/../login.PHP?${query}`,
      'raw.http.request.uri.path': '/a/./b/../login.PHP',
      'raw.http.request.uri.path.extension': 'PHP',
      'raw.http.request.uri.query': query,
      'raw.http.request.uri.args': args,
      'raw.http.request.uri.args.names': argNames,
      'raw.http.request.uri.args.values': argValues,
      'http.request.headers': {
        'content-type': ['application/x-www-form-urlencoded; charset=utf-8'],
        cookie: ['sid=abc%3D; %74heme=dark', 'sid=second'],
        'user-agent': ['UA/1.0'],
        referer: ['https://shop.example.com/'],
        'x-forwarded-for': ['203.0.113.1', '10.0.0.1'],
      },
      'http.request.headers.names': ['Content-Type', 'Cookie', 'Cookie', 'User-Agent', 'Referer', 'X-Forwarded-For', 'X-Forwarded-For'],
      'http.request.headers.values': [
        'application/x-www-form-urlencoded; charset=utf-8',
        'sid=abc%3D; %74heme=dark',
        'sid=second',
        'UA/1.0',
        'https://shop.example.com/',
        '203.0.113.1',
        '10.0.0.1',
      ],
      'http.request.headers.truncated': false,
      'http.cookie': 'sid=abc%3D; %74heme=dark; sid=second',
      'http.request.cookies': { sid: ['abc%3D', 'second'], theme: ['dark'] },
      'http.user_agent': 'UA/1.0',
      'http.referer': 'https://shop.example.com/',
      'http.x_forwarded_for': '203.0.113.1, 10.0.0.1',
      'http.request.body.raw': 'user=admin&pass=p%40ss+word&user=root&empty=&novalue',
      'http.request.body.size': 52,
      'http.request.body.truncated': false,
      'http.request.body.mime': 'text/plain',
      'http.request.body.form': { user: ['admin', 'root'], pass: ['p%40ss+word'], empty: [''], novalue: [''] },
      'http.request.body.form.names': ['user', 'pass', 'user', 'empty', 'novalue'],
      'http.request.body.form.values': ['admin', 'p%40ss+word', 'root', '', ''],
      ...NO_MULTIPART,
      ssl: true,
      'ip.src': '198.51.100.23',
      'http.request.timestamp.sec': DEFAULT_TIMESTAMP_SEC,
      'http.request.timestamp.msec': 0,
      'cf.edge.server_port': 8443,
    });
  });

  test('multipart.http: parts, names, file names, part headers; the preamble is skipped', () => {
    const [r] = fixture('multipart.http');
    const f = fieldsOf(r);
    assert.deepEqual(
      pick(f, [...Object.keys(NO_MULTIPART), 'http.request.body.form.names', 'http.request.body.mime', 'http.request.body.size']),
      {
        'http.request.body.multipart': { title: ['Hello', 'Again'], file: ['<?php echo 1; ?>'] },
        'http.request.body.multipart.names': [['title'], ['file'], ['title']],
        'http.request.body.multipart.values': ['Hello', '<?php echo 1; ?>', 'Again'],
        'http.request.body.multipart.content_types': [[], ['application/x-php'], []],
        'http.request.body.multipart.content_dispositions': [['form-data; name="title"'], ['form-data; name="file"; filename="a.php"'], ['form-data; name="title"']],
        'http.request.body.multipart.content_transfer_encodings': [[], ['binary'], []],
        'http.request.body.multipart.filenames': [[], ['a.php'], []],
        'http.request.body.form.names': [],
        'http.request.body.mime': 'text/plain',
        'http.request.body.size': (r.body ?? '').length,
      },
    );
  });

  test('metadata.http: meta values typed, Host with port, relative URL', () => {
    const [germany, ids] = fixture('metadata.http');
    assert.deepEqual(
      pick(fieldsOf(germany), ['http.request.method', 'http.request.version', 'http.host', 'http.request.full_uri', 'ssl', 'cf.edge.server_port', 'ip.src', 'ip.src.country', 'cf.bot_management.score', 'http.request.cookies']),
      {
        'http.request.method': 'GET',
        'http.request.version': 'HTTP/2',
        'http.host': 'example.com',
        'http.request.full_uri': 'http://example.com:8443/admin',
        ssl: false,
        'cf.edge.server_port': 8443,
        'ip.src': '203.0.113.9',
        'ip.src.country': 'DE',
        'cf.bot_management.score': 12,
        'http.request.cookies': { session: ['abc'], theme: ['dark'] },
      },
    );
    assert.deepEqual(pick(fieldsOf(ids), ['cf.bot_management.detection_ids', 'http.request.jwt.claims.sub', 'http.request.body.raw', 'http.request.uri.args.names', 'ip.src']), {
      'cf.bot_management.detection_ids': [1, 33554433],
      'http.request.jwt.claims.sub': { cfg: ['user'] },
      'http.request.body.raw': { hex: '00ff' },
      'http.request.uri.args.names': ['q', 'page'],
      'ip.src': DEFAULT_CLIENT_IP,
    });
  });

  test('a deprecated ip.geoip.* name holds what its ip.src.* field holds, given under either name', () => {
    const sample = (meta: Record<string, string>) => ({ method: 'GET', url: 'https://example.com/', httpVersion: 'HTTP/1.1', headers: [] as [string, string][], meta });
    const names = ['ip.src.country', 'ip.geoip.country', 'ip.src.asnum', 'ip.geoip.asnum'];
    const geo = (f: Record<string, unknown>) => Object.fromEntries(names.filter((n) => f[n] !== undefined).map((n) => [n, f[n]]));
    assert.deepEqual(geo(requestFields(sample({ 'ip.src.country': 'DE', 'ip.src.asnum': '64500' })).fields), { 'ip.src.country': 'DE', 'ip.geoip.country': 'DE', 'ip.src.asnum': 64500, 'ip.geoip.asnum': 64500 });
    assert.deepEqual(geo(requestFields(sample({ 'ip.geoip.country': 'FR' })).fields), { 'ip.src.country': 'FR', 'ip.geoip.country': 'FR' });
    // Both given: each as written.
    assert.deepEqual(geo(requestFields(sample({ 'ip.src.country': 'DE', 'ip.geoip.country': 'FR' })).fields), { 'ip.src.country': 'DE', 'ip.geoip.country': 'FR' });
    assert.deepEqual(geo(requestFields(sample({})).fields), {});
  });

  test('every fixture request (and every vendor test request) converts with prepareFields without errors', () => {
    const vendorDir = new URL('../../fixtures/vendor/', import.meta.url);
    const all = [...fixture('two-requests.http'), ...fixture('metadata.http'), ...fixture('form-post.http'), ...fixture('multipart.http')];
    for (const name of ['log4shell-header.http', 'struts-file-upload-traversal.http', 'wp-xmlrpc-multicall.http']) {
      try {
        all.push(...parseHttpFile(readFileSync(new URL(name, vendorDir), 'utf8')).requests);
      } catch {
        // the vendor fixtures belong to another part of the project; they are optional here
      }
    }
    for (const r of all) {
      const f = requestFields(r);
      assert.deepEqual(f.problems, [], r.name);
      assert.deepEqual(prepareFields(f.fields).errors, [], r.name);
    }
  });
});

describe('requestFields: URL, host and scheme', () => {
  const URL_FIELDS = ['http.host', 'http.request.full_uri', 'http.request.uri', 'http.request.uri.path', 'raw.http.request.uri', 'ssl', 'cf.edge.server_port'];
  const cases: readonly [string, Partial<SampleRequest>, Record<string, unknown>][] = [
    [
      'origin-form URL: host from the Host header (port kept out of http.host)',
      { url: '/x?y=1', headers: [['Host', 'Api.Example.com:8080']] },
      { 'http.host': 'api.example.com', 'http.request.full_uri': 'http://api.example.com:8080/x?y=1', 'http.request.uri': '/x?y=1', 'http.request.uri.path': '/x', 'raw.http.request.uri': '/x?y=1', ssl: false, 'cf.edge.server_port': 8080 },
    ],
    [
      'the default port is not written in full_uri',
      { url: 'https://example.com:443/' },
      { 'http.host': 'example.com', 'http.request.full_uri': 'https://example.com/', 'http.request.uri': '/', 'http.request.uri.path': '/', 'raw.http.request.uri': '/', ssl: true, 'cf.edge.server_port': 443 },
    ],
    [
      'an absolute URL wins over the Host header; no path means /',
      { url: 'http://a.example', headers: [['Host', 'b.example']] },
      { 'http.host': 'a.example', 'http.request.full_uri': 'http://a.example/', 'http.request.uri': '/', 'http.request.uri.path': '/', 'raw.http.request.uri': '/', ssl: false, 'cf.edge.server_port': 80 },
    ],
    [
      'IPv6 literal host with port, user info dropped',
      { url: 'http://u:p@[2001:DB8::1]:8080/' },
      { 'http.host': '[2001:db8::1]', 'http.request.full_uri': 'http://[2001:db8::1]:8080/', 'http.request.uri': '/', 'http.request.uri.path': '/', 'raw.http.request.uri': '/', ssl: false, 'cf.edge.server_port': 8080 },
    ],
    [
      'the #fragment is never part of a field',
      { url: 'https://example.com/a?b=1#frag' },
      { 'http.host': 'example.com', 'http.request.full_uri': 'https://example.com/a?b=1', 'http.request.uri': '/a?b=1', 'http.request.uri.path': '/a', 'raw.http.request.uri': '/a?b=1', ssl: true, 'cf.edge.server_port': 443 },
    ],
    [
      'a relative URL with meta ssl true is https',
      { url: '/', headers: [['Host', 'example.com']], meta: { ssl: 'true' } },
      { 'http.host': 'example.com', 'http.request.full_uri': 'https://example.com/', 'http.request.uri': '/', 'http.request.uri.path': '/', 'raw.http.request.uri': '/', ssl: true, 'cf.edge.server_port': 443 },
    ],
    [
      'no host at all: empty http.host',
      { url: '/a' },
      { 'http.host': '', 'http.request.full_uri': 'http:///a', 'http.request.uri': '/a', 'http.request.uri.path': '/a', 'raw.http.request.uri': '/a', ssl: false, 'cf.edge.server_port': 80 },
    ],
    [
      'the query is not normalized; the path is (non-ASCII as UTF-8 escapes)',
      { url: 'https://example.com/%7euser/caf\u00e9//x/../y?q=%7e+a&r=\u00e9' },
      {
        'http.host': 'example.com',
        'http.request.full_uri': 'https://example.com/~user/caf%C3%A9/y?q=%7e+a&r=\u00e9',
        'http.request.uri': '/~user/caf%C3%A9/y?q=%7e+a&r=\u00e9',
        'http.request.uri.path': '/~user/caf%C3%A9/y',
        'raw.http.request.uri': '/%7euser/caf\u00e9//x/../y?q=%7e+a&r=\u00e9',
        ssl: true,
        'cf.edge.server_port': 443,
      },
    ],
    [
      'an empty query keeps its ?',
      { url: 'https://example.com/a?' },
      { 'http.host': 'example.com', 'http.request.full_uri': 'https://example.com/a?', 'http.request.uri': '/a?', 'http.request.uri.path': '/a', 'raw.http.request.uri': '/a?', ssl: true, 'cf.edge.server_port': 443 },
    ],
    [
      'odd request targets of the CRS tests are taken as paths',
      { url: '\\index.html', headers: [['Host', 'localhost']] },
      { 'http.host': 'localhost', 'http.request.full_uri': 'http://localhost/index.html', 'http.request.uri': '/index.html', 'http.request.uri.path': '/index.html', 'raw.http.request.uri': '\\index.html', ssl: false, 'cf.edge.server_port': 80 },
    ],
  ];
  for (const [name, over, expected] of cases) test(name, () => assert.deepEqual(pick(fieldsOf(req(over)), URL_FIELDS), expected));

  test('normalization option: rfc3986 and none', () => {
    const r = req({ url: 'https://example.com/a//b/%2e%2e/c\\d' });
    assert.equal(fieldsOf(r)['http.request.uri.path'], '/a/c/d');
    assert.equal(fieldsOf(r, { normalization: 'rfc3986' })['http.request.uri.path'], '/a//c%5Cd');
    assert.equal(fieldsOf(r, { normalization: 'none' })['http.request.uri.path'], '/a//b/%2e%2e/c\\d');
    assert.equal(fieldsOf(r, { normalization: 'none' })['raw.http.request.uri.path'], '/a//b/%2e%2e/c\\d');
  });
});

describe('requestFields: headers, cookies, body', () => {
  test('absent single-value headers are empty strings; repeated ones are joined', () => {
    assert.deepEqual(pick(fieldsOf(req({})), ['http.cookie', 'http.user_agent', 'http.referer', 'http.x_forwarded_for', 'http.request.cookies']), {
      'http.cookie': '',
      'http.user_agent': '',
      'http.referer': '',
      'http.x_forwarded_for': '',
      'http.request.cookies': {},
    });
    const f = fieldsOf(req({ headers: [['user-agent', 'a'], ['USER-AGENT', 'b'], ['cookie', 'x=1'], ['Cookie', ' y = 2 ;;z']] }));
    assert.deepEqual(pick(f, ['http.user_agent', 'http.cookie', 'http.request.cookies', 'http.request.headers', 'http.request.headers.names']), {
      'http.user_agent': 'a, b',
      'http.cookie': 'x=1;  y = 2 ;;z',
      'http.request.cookies': { x: ['1'], y: ['2'], z: [''] },
      'http.request.headers': { 'user-agent': ['a', 'b'], cookie: ['x=1', ' y = 2 ;;z'] },
      'http.request.headers.names': ['user-agent', 'USER-AGENT', 'cookie', 'Cookie'],
    });
  });

  test('a body that is not UTF-8 is given as hex, exactly', () => {
    const body = 'a=\xac\xed\x00\x05';
    const r = req({ method: 'POST', headers: [['Content-Type', 'application/x-www-form-urlencoded']], body });
    const f = fieldsOf(r);
    assert.deepEqual(pick(f, ['http.request.body.raw', 'http.request.body.size', 'http.request.body.mime', 'http.request.body.form', 'http.request.body.form.values']), {
      'http.request.body.raw': { hex: '613daced0005' },
      'http.request.body.size': 6,
      'http.request.body.mime': 'application/octet-stream',
      'http.request.body.form': { a: [{ hex: 'aced0005' }] },
      'http.request.body.form.values': [{ hex: 'aced0005' }],
    });
    const values = prepareFields(requestFields(r).fields);
    assert.deepEqual(values.errors, []);
    assert.equal(values.values.get('http.request.body.raw'), body);
    // The JSON form (what `eval --format json` and the editor show) and a copy sent to a worker
    // (structured clone: the hex is all that crosses) read as the same bytes.
    assert.equal(JSON.stringify(f['http.request.body.raw']), '{"hex":"613daced0005"}');
    const cloned = prepareFields(structuredClone(requestFields(r).fields));
    assert.equal(cloned.values.get('http.request.body.raw'), body);
    assert.deepEqual(cloned.values.get('http.request.body.form.values'), ['\xac\xed\x00\x05']);
  });

  test('a map key that is not UTF-8 reads with U+FFFD and is reported', () => {
    const r = requestFields(req({ headers: [['Cookie', '%FFid=1']] }));
    assert.deepEqual(plain(r.fields['http.request.cookies']), { '\ufffdid': ['1'] });
    assert.deepEqual(r.problems, ['cookie name "\ufffdid" is not valid UTF-8; as a map key its bad bytes read as U+FFFD (the name arrays keep the exact bytes)']);
  });

  test('__proto__ and constructor are ordinary map keys', () => {
    const f = requestFields(req({ url: 'https://example.com/?__proto__=1&constructor=2' })).fields;
    const args = f['http.request.uri.args'] as Record<string, unknown>;
    assert.deepEqual(Object.keys(args), ['__proto__', 'constructor']);
    assert.deepEqual(plain(args), JSON.parse('{"__proto__": ["1"], "constructor": ["2"]}'));
    assert.deepEqual(prepareFields(f).errors, []);
  });

  test('form fields only for application/x-www-form-urlencoded (any case, with parameters)', () => {
    const body = 'a=1&b=2';
    const form = (ct: string): unknown => fieldsOf(req({ method: 'POST', headers: [['content-type', ct]], body }))['http.request.body.form.names'];
    assert.deepEqual(form('Application/X-WWW-Form-URLEncoded ; charset=UTF-8'), ['a', 'b']);
    assert.deepEqual(form('text/plain'), []);
    assert.deepEqual(form('multipart/form-data; boundary=x'), []);
  });

  test('multipart with CRLF, binary content, filename*, a part without a name, an unterminated last part', () => {
    const body = [
      '--XyZ',
      'Content-Disposition: form-data; name="f"; filename="a b.bin"; filename*=UTF-8\'\'%C3%A9.bin',
      'Content-Type: application/octet-stream',
      '',
      '\x00\xff\r\n',
      '--XyZ',
      'Content-Type: text/plain',
      '',
      'anonymous',
      '--XyZ',
      'Content-Disposition: form-data; name=last',
      '',
      'no close delimiter',
    ].join('\r\n');
    const f = fieldsOf(req({ method: 'POST', headers: [['Content-Type', 'multipart/form-data; boundary=XyZ']], body }));
    assert.deepEqual(pick(f, Object.keys(NO_MULTIPART)), {
      'http.request.body.multipart': { f: [{ hex: '00ff0d0a' }], last: ['no close delimiter'] },
      'http.request.body.multipart.names': [['f'], [], ['last']],
      'http.request.body.multipart.values': [{ hex: '00ff0d0a' }, 'anonymous', 'no close delimiter'],
      'http.request.body.multipart.content_types': [['application/octet-stream'], ['text/plain'], []],
      'http.request.body.multipart.content_dispositions': [["form-data; name=\"f\"; filename=\"a b.bin\"; filename*=UTF-8''%C3%A9.bin"], [], ['form-data; name=last']],
      'http.request.body.multipart.content_transfer_encodings': [[], [], []],
      'http.request.body.multipart.filenames': [['a b.bin', 'é.bin'], [], []],
    });
  });
});

describe('requestFields: metadata', () => {
  test('meta replaces computed values; defaults otherwise', () => {
    const f = fieldsOf(req({ meta: { 'ip.src': '2001:db8::7', 'http.request.timestamp.sec': '1600000000', 'cf.edge.server_port': '8443', 'http.user_agent': 'from meta' } }));
    assert.deepEqual(pick(f, ['ip.src', 'http.request.timestamp.sec', 'http.request.timestamp.msec', 'cf.edge.server_port', 'http.user_agent']), {
      'ip.src': '2001:db8::7',
      'http.request.timestamp.sec': 1600000000,
      'http.request.timestamp.msec': 0,
      'cf.edge.server_port': 8443,
      'http.user_agent': 'from meta',
    });
    assert.deepEqual(pick(fieldsOf(req({})), ['ip.src', 'http.request.timestamp.sec']), { 'ip.src': '192.0.2.1', 'http.request.timestamp.sec': 1700000000 });
  });

  test('unknown fields and bad values are problems and leave the computed value', () => {
    const r = requestFields(req({ meta: { 'ip.source': '203.0.113.9', 'cf.edge.server_port': 'eighty', 'http.request.timestamp.sec': '1.5' } }));
    assert.deepEqual(r.problems, [
      'unknown field "ip.source" (did you mean ip.src?)',
      'cf.edge.server_port: expected an integer, got "eighty"',
      'http.request.timestamp.sec: expected an integer, got "1.5"',
    ]);
    assert.equal(r.fields['cf.edge.server_port'], 443);
    assert.equal('ip.source' in r.fields, false);
  });

  const VALUES: readonly [string, string, { value?: unknown; problem?: string }][] = [
    ['http.host', '  spaced  ', { value: '  spaced  ' }],
    ['http.host', '"quoted\\tjson"', { value: 'quoted\tjson' }],
    ['http.request.body.raw', '{"base64": "gP8="}', { value: { base64: 'gP8=' } }],
    ['http.request.body.raw', '{not json', { value: '{not json' }],
    ['cf.bot_management.score', ' 12 ', { value: 12 }],
    ['cf.bot_management.score', '-3', { value: -3 }],
    ['cf.bot_management.score', '9223372036854775807', { value: 9223372036854775807n }],
    ['cf.bot_management.score', '9223372036854775808', { problem: 'cf.bot_management.score: expected an integer (Int), got 9223372036854775808' }],
    ['ssl', 'TRUE', { value: true }],
    ['ssl', 'false', { value: false }],
    ['ssl', 'yes', { problem: 'ssl: expected true or false, got "yes"' }],
    ['ip.src', ' 203.0.113.9 ', { value: '203.0.113.9' }],
    ['ip.src', 'localhost', { problem: 'ip.src: expected an IP address (Ip), got "localhost"' }],
    ['cf.bot_management.detection_ids', '[1, 2]', { value: [1, 2] }],
    ['cf.bot_management.detection_ids', '["a"]', { problem: 'cf.bot_management.detection_ids[0]: expected an integer (Int), got "a"' }],
    ['http.request.jwt.claims.sub', '{"c": ["u"]}', { value: { c: ['u'] } }],
    ['http.request.jwt.claims.sub', '[]', { problem: 'http.request.jwt.claims.sub: expected an object (Map<Array<Bytes>>), got []' }],
    ['cf.api_gateway.jwt_valid', '{"cfg": true}', { value: { cfg: true } }],
    ['ip.geoip.country', 'DE', { value: 'DE' }],
    ['http.request.uri.path.ext', 'php', { problem: 'unknown field "http.request.uri.path.ext" (did you mean http.request.uri.path.extension?)' }],
  ];
  for (const [name, text, expected] of VALUES) test(`metaFieldValue ${name} ${JSON.stringify(text)}`, () => assert.deepEqual(metaFieldValue(name, text), expected));
});

describe('helpers', () => {
  test('requestSummary', () => {
    assert.equal(requestSummary(req({ method: 'POST', url: 'https://example.com/login?next=%2F' })), 'POST /login?next=%2F');
    assert.equal(requestSummary(req({ url: 'https://example.com' })), 'GET /');
    assert.equal(requestSummary(req({ url: '/a#frag' })), 'GET /a');
    assert.equal(requestSummary(req({ url: '*', method: 'OPTIONS' })), 'OPTIONS *');
    const long = requestSummary(req({ url: '/' + 'x'.repeat(200) }));
    assert.equal(long.length, 80);
    assert.ok(long.endsWith('…'));
  });
});

describe('edgeOnlyField', () => {
  test('names the fields only an edge gives, a deprecated ip.geoip.* one by the ip.src.* field it holds', () => {
    assert.deepEqual(
      ['ip.src.continent', 'cf.tls_client_auth.cert_verified', 'http.request.accepted_languages', 'http.request.jwt.claims.sub', 'ip.geoip.country'].map(edgeOnlyField),
      ['ip.src.continent', 'cf.tls_client_auth.cert_verified', 'http.request.accepted_languages', 'http.request.jwt.claims.sub', 'ip.src.country'],
    );
  });

  test('leaves out what the request or its answer gives, `true`, and names the scheme does not have', () => {
    assert.deepEqual(['http.cookie', 'raw.http.request.uri', 'http.response.code', 'true', 'crs.args', 'ip.src.nowhere'].map(edgeOnlyField), [undefined, undefined, undefined, undefined, undefined, undefined]);
  });
});
