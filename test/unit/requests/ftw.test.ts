import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { yamlFiles } from '../../../server/src/corpusFiles';
import { prepareFields } from '../../../server/src/language/index';
import { requestFields } from '../../../server/src/requests/fields';
import { ftwFormReencode, ftwInputRequest, ftwRuleId, parseFtwFile, parseRawRequest, serverRejection, incompleteBody } from '../../../server/src/requests/ftw';
import { goFormEncode, goFtwInputRequest } from '../../../server/src/requests/goFtw';
import type { SampleRequest } from '../../../server/src/requests/types';

const b64 = (binary: string): string => Buffer.from(binary, 'latin1').toString('base64');

describe('parseFtwFile', () => {
  test('the 3.3.x format: meta, tests, stage wrapper, outputs; names and source of each stage', () => {
    const text = [
      '---',
      '  meta:',
      '    author: "Someone"',
      '    description: Tests',
      '    enabled: true',
      '    name: 942100.yaml',
      '  tests:',
      '  -',
      '    test_title: 942100-1',
      '    desc: "Simple SQL Injection"',
      '    stages:',
      '    -',
      '      stage:',
      '        input:',
      '          dest_addr: 127.0.0.1',
      '          headers:',
      '            Host: localhost',
      '          method: POST',
      '          port: 80',
      '          uri: "/"',
      '          data: "var=1234 OR 1=1"',
      '          version: HTTP/1.0',
      '        output:',
      '          log_contains: id "942100"',
      '  - test_title: two-stages',
      '    stages:',
      '      - stage:',
      '          input: { uri: "/a" }',
      '          output: { status: [403, 400], no_log_contains: "id \\"920100\\"" }',
      '      - stage:',
      '          input: { uri: "/b", protocol: https, port: 443 }',
      '          output: { status: 200, expect_error: true }',
      '',
    ].join('\n');
    const r = parseFtwFile(text);
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.meta, { author: 'Someone', description: 'Tests', enabled: true, name: '942100.yaml' });
    assert.deepEqual(
      r.tests.map((t) => ({ ...t, stages: t.stages.map((s) => ({ ...s, request: { ...s.request, source: undefined } })) })),
      [
        {
          title: '942100-1',
          description: 'Simple SQL Injection',
          enabled: true,
          stages: [
            {
              request: {
                name: '942100-1',
                method: 'POST',
                url: '/',
                httpVersion: 'HTTP/1.0',
                headers: [
                  ['Host', 'localhost'],
                  ['Content-Type', 'application/x-www-form-urlencoded'],
                  ['Content-Length', '17'],
                ],
                body: 'var=1234+OR+1%3D1',
                meta: { 'cf.edge.server_port': '80' },
                wire: true,
                source: undefined,
              },
              output: { logContains: 'id "942100"' },
            },
          ],
        },
        {
          title: 'two-stages',
          enabled: true,
          stages: [
            {
              request: { name: 'two-stages (stage 1)', method: 'GET', url: '/a', httpVersion: 'HTTP/1.1', headers: [], meta: {}, wire: true, source: undefined },
              output: { noLogContains: 'id "920100"', status: [403, 400] },
            },
            {
              request: { name: 'two-stages (stage 2)', method: 'GET', url: '/b', httpVersion: 'HTTP/1.1', headers: [], meta: { ssl: 'true', 'cf.edge.server_port': '443' }, wire: true, source: undefined },
              output: { status: [200], expectError: true },
            },
          ],
        },
      ],
    );
    // The source of a stage is its input mapping; line is 0-based.
    const sources = r.tests.flatMap((t) => t.stages.map((s) => s.request.source));
    assert.deepEqual(
      sources.map((s) => s?.line),
      [14, 27, 30],
    );
    assert.equal(text.slice(sources[1]?.start, sources[1]?.end), '{ uri: "/a" }');
  });

  test('YAML 1.1 scalars as PyYAML reads them; header values written as Python str() does', () => {
    const r = parseFtwFile('tests:\n- test_title: t\n  stages:\n  - stage:\n      input:\n        headers: { X-Yes: yes, X-Off: off, X-Num: 0x10, X-Float: 1.5, X-Null: ~, X-Time: 1:20 }\n      output: {}\n');
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.tests[0].stages[0].request.headers, [
      ['X-Yes', 'True'],
      ['X-Off', 'False'],
      ['X-Num', '16'],
      ['X-Float', '1.5'],
      ['X-Null', 'None'],
      ['X-Time', '80'],
    ]);
  });

  test('duplicate keys: the last one wins, as with PyYAML', () => {
    const r = parseFtwFile('tests:\n- test_title: t\n  stages:\n  - stage:\n      input: { uri: /a, uri: /b }\n      output: {}\n');
    assert.deepEqual(r.problems, []);
    assert.equal(r.tests[0].stages[0].request.url, '/b');
  });

  test('a disabled file or test is returned with enabled false', () => {
    const stage = '  stages:\n  - stage: { input: {}, output: {} }\n';
    const disabledFile = parseFtwFile(`meta: { enabled: false }\ntests:\n- test_title: a\n${stage}`);
    assert.deepEqual(disabledFile.tests.map((t) => [t.title, t.enabled]), [['a', false]]);
    const disabledTest = parseFtwFile(`meta: { enabled: true }\ntests:\n- test_title: a\n  enabled: false\n${stage}- test_title: 7\n${stage}`);
    assert.deepEqual(disabledTest.tests.map((t) => [t.title, t.enabled]), [['a', false], ['7', true]]);
  });

  test('go-ftw v2 stages without the stage wrapper are read too', () => {
    const r = parseFtwFile('tests:\n- test_id: 3\n  stages:\n  - input: { uri: /x }\n    output: { log_contains: "id:1" }\n');
    assert.deepEqual(r.problems, []);
    assert.deepEqual([r.tests[0].title, r.tests[0].stages[0].request.url, r.tests[0].stages[0].output], ['3', '/x', { logContains: 'id:1' }]);
  });

  const PROBLEMS: readonly [string, string, { line: number; message: string }[], number][] = [
    ['YAML syntax error', 'tests:\n- test_title: "a\n', [{ line: 2, message: 'YAML: Missing closing "quote' }], 0],
    ['not a mapping', '- a\n- b\n', [{ line: 0, message: 'expected a mapping with "meta" and "tests"' }], 0],
    ['no tests list', 'meta: {}\ntests: 3\n', [{ line: 1, message: 'expected a list of tests under "tests"' }], 0],
    [
      'a test without title, one without stages, one with a bad stage; the good one is kept',
      [
        'tests:',
        '- stages: []',
        '- test_title: empty',
        '  stages: []',
        '- test_title: bad',
        '  stages:',
        '  - stage:',
        '      input:',
        '        encoded_request: "not base64!"',
        '      output: {}',
        '- test_title: no-input',
        '  stages:',
        '  - stage: { output: {} }',
        '- test_title: good',
        '  stages:',
        '  - stage: { input: {}, output: {} }',
        '',
      ].join('\n'),
      [
        { line: 1, message: 'test 1: no test_title' },
        { line: 2, message: 'test empty: no stages' },
        { line: 8, message: 'test bad, stage 1: encoded_request is not valid base64' },
        { line: 12, message: 'test no-input, stage 1: no input' },
      ],
      1,
    ],
    [
      'raw and encoded request both given',
      'tests:\n- test_title: x\n  stages:\n  - stage:\n      input: { raw_request: "GET / HTTP/1.1\\r\\n\\r\\n", encoded_request: "R0VUIC8=" }\n      output: {}\n',
      [{ line: 4, message: 'test x, stage 1: raw_request and encoded_request are both given (ftw rejects that)' }],
      0,
    ],
    [
      'a raw request that does not parse',
      'tests:\n- test_title: x\n  stages:\n  - stage:\n      input:\n        raw_request: "garbage"\n      output: {}\n',
      [{ line: 5, message: 'test x, stage 1: raw_request: bad request line "garbage" (expected METHOD target HTTP/x.y)' }],
      0,
    ],
  ];
  for (const [name, text, problems, tests] of PROBLEMS) {
    test(`problems: ${name}`, () => {
      const r = parseFtwFile(text);
      assert.deepEqual(r.problems, problems);
      assert.equal(r.tests.length, tests);
    });
  }

  test('never throws on odd input', () => {
    for (const text of ['', '~', '[]', '"x"', 'tests: [1, null, {}]', 'tests:\n- test_title: a\n  stages: [1, {stage: 2}]', '&a [*a]', 'a: &x [*x]', '\t', '%YAML 9.9\n---\n']) {
      const r = parseFtwFile(text);
      assert.ok(Array.isArray(r.tests) && Array.isArray(r.problems), JSON.stringify(text));
    }
  });
});

describe('ftwInputRequest: how ftw builds the request', () => {
  const base = { method: 'GET', url: '/', httpVersion: 'HTTP/1.1', meta: {} };
  const FORM = 'application/x-www-form-urlencoded';
  const cases: readonly [string, Record<string, unknown>, Partial<SampleRequest> & { headers: [string, string][] }][] = [
    ['defaults', {}, { ...base, headers: [] }],
    ['odd values are kept as written', { method: '\tGET', uri: '1.2.3.4:80', version: 'JUNK/1.0' }, { ...base, method: '\tGET', url: '1.2.3.4:80', httpVersion: 'JUNK/1.0', headers: [] }],
    [
      'data: Content-Type and Content-Length added, form data re-encoded',
      { method: 'POST', data: "a=x y'z&b=&c" },
      { ...base, method: 'POST', headers: [['Content-Type', FORM], ['Content-Length', '9']], body: 'a=x+y%27z' },
    ],
    [
      'data with a %XX escape is sent as written',
      { method: 'POST', data: 'a=%41 b' },
      { ...base, method: 'POST', headers: [['Content-Type', FORM], ['Content-Length', '7']], body: 'a=%41 b' },
    ],
    [
      'a Content-Type with parameters is not the exact form type: no re-encoding',
      { method: 'POST', headers: { 'Content-Type': `${FORM}; charset=utf-8` }, data: 'a=x y' },
      { ...base, method: 'POST', headers: [['Content-Type', `${FORM}; charset=utf-8`], ['Content-Length', '5']], body: 'a=x y' },
    ],
    [
      'a given Content-Length is kept and cuts the body the server reads',
      { method: 'POST', headers: { 'content-length': 3, 'Content-Type': 'text/plain' }, data: 'abcdef' },
      { ...base, method: 'POST', headers: [['content-length', '3'], ['Content-Type', 'text/plain']], body: 'abc' },
    ],
    [
      'data as a list of lines is joined with CRLF; Content-Length counts UTF-8 bytes',
      { method: 'POST', headers: { 'Content-Type': 'text/plain' }, data: ['é', '', 'x'] },
      { ...base, method: 'POST', headers: [['Content-Type', 'text/plain'], ['Content-Length', '7']], body: '\xc3\xa9\r\n\r\nx' },
    ],
    [
      'stop_magic: headers exactly as written; without Content-Length there is no body',
      { method: 'POST', headers: { 'Content-Type': FORM }, data: 'hi=test', stop_magic: true },
      { ...base, method: 'POST', headers: [['Content-Type', FORM]] },
    ],
    [
      'stop_magic with Content-Length 0 (920170-5): a GET without a body',
      { headers: { 'Content-Length': '0' }, data: 'hi=test\r\n', stop_magic: true },
      { ...base, headers: [['Content-Length', '0']] },
    ],
    [
      'autocomplete_headers: false is stop_magic',
      { headers: { 'Content-Length': 2 }, data: 'a b', autocomplete_headers: false },
      { ...base, headers: [['Content-Length', '2']], body: 'a ' },
    ],
    [
      'chunked Transfer-Encoding is decoded (920181-1)',
      { method: 'POST', headers: { 'Content-Length': 7, 'Transfer-Encoding': 'chunked' }, data: ['7', 'foo=bar', '0', '', ''], stop_magic: true },
      { ...base, method: 'POST', headers: [['Content-Length', '7'], ['Transfer-Encoding', 'chunked']], body: 'foo=bar' },
    ],
    [
      'malformed chunked data is kept as sent',
      { method: 'POST', headers: { 'Transfer-Encoding': 'chunked' }, data: 'zz\r\nabc', stop_magic: true },
      { ...base, method: 'POST', headers: [['Transfer-Encoding', 'chunked']], body: 'zz\r\nabc' },
    ],
    [
      'protocol https and port become edge metadata; dest_addr is not used',
      { protocol: 'https', port: 8443, dest_addr: '127.0.0.1' },
      { ...base, headers: [], meta: { ssl: 'true', 'cf.edge.server_port': '8443' } },
    ],
    [
      'raw_request: text sent as UTF-8 (944200-0FP), body cut to Content-Length',
      { raw_request: 'POST / HTTP/1.0\r\nContent-Length: 9\r\n\r\ntest=\xac\xed\x00\x05\r\n\r\n', port: 80 },
      { ...base, method: 'POST', httpVersion: 'HTTP/1.0', headers: [['Content-Length', '9']], body: 'test=\xc2\xac\xc3\xad', meta: { 'cf.edge.server_port': '80' } },
    ],
    [
      'encoded_request: the exact bytes (944200-1)',
      { encoded_request: b64('POST / HTTP/1.0\r\nContent-Length: 9\r\n\r\ntest=\xac\xed\x00\x05\r\n\r\n') },
      { ...base, method: 'POST', httpVersion: 'HTTP/1.0', headers: [['Content-Length', '9']], body: 'test=\xac\xed\x00\x05' },
    ],
  ];
  for (const [name, input, expected] of cases) test(name, () => assert.deepEqual(ftwInputRequest(input), { request: expected }));
});

describe('ftwFormReencode: Python urlencode(parse_qsl(data))', () => {
  const cases: readonly [string, string][] = [
    ['var=1234 OR 1=1', 'var=1234+OR+1%3D1'],
    ["var=2010-01-01'+sleep(20.to_i)+'", 'var=2010-01-01%27+sleep%2820.to_i%29+%27'],
    ['a=1&b=&c&&d=4', 'a=1&d=4'],
    ['no pairs', 'no pairs'],
    ['a=', 'a='],
    ['x=é~_.-*', 'x=%C3%A9~_.-%2A'],
    ['a=1;b=2', 'a=1%3Bb%3D2'],
    ['=v', '=v'],
    ['k=<script>alert(1)</script>', 'k=%3Cscript%3Ealert%281%29%3C%2Fscript%3E'],
  ];
  for (const [input, output] of cases) test(JSON.stringify(input), () => assert.equal(ftwFormReencode(input), output));
});

describe('parseRawRequest', () => {
  const ok = (over: Partial<SampleRequest>): { request: SampleRequest } => ({ request: { method: 'GET', url: '/', httpVersion: 'HTTP/1.1', headers: [], meta: {}, ...over } });
  const cases: readonly [string, string, { request?: SampleRequest; problem?: string }][] = [
    ['a simple GET', 'GET /a?b=1 HTTP/1.1\r\nHost: x\r\n\r\n', ok({ url: '/a?b=1', headers: [['Host', 'x']] })],
    ['bare LF line ends (932100)', 'POST /i HTTP/1.1\nHost: h\nContent-Length: 3\n\nd=1;2', ok({ method: 'POST', url: '/i', headers: [['Host', 'h'], ['Content-Length', '3']], body: 'd=1' })],
    ['empty lines before the request line are skipped', '\r\n\r\nGET / HTTP/1.0\r\n\r\n', ok({ httpVersion: 'HTTP/1.0' })],
    ['no version reads as HTTP/0.9', 'GET /\r\n', ok({ httpVersion: 'HTTP/0.9' })],
    ['no empty line after the headers', 'GET / HTTP/1.1\r\nA: 1', ok({ headers: [['A', '1']] })],
    ['obsolete line folding joins the value', 'GET / HTTP/1.1\r\nA: 1\r\n  2\r\n\tthree\r\n\r\n', ok({ headers: [['A', '1 2 three']] })],
    ['header values are trimmed and may hold colons', 'GET / HTTP/1.1\r\nX:  a:b  \r\nY:\r\n\r\n', ok({ headers: [['X', 'a:b'], ['Y', '']] })],
    ['a UTF-8 header is text', 'GET / HTTP/1.1\r\nX: caf\xc3\xa9\r\n\r\n', ok({ headers: [['X', 'café']] })],
    ['no Content-Length: no body', 'POST / HTTP/1.1\r\n\r\nignored', ok({ method: 'POST' })],
    ['Content-Length longer than the data: what was sent', 'POST / HTTP/1.1\r\nContent-Length: 50\r\n\r\nabc', ok({ method: 'POST', headers: [['Content-Length', '50']], body: 'abc' })],
    ['conflicting Content-Length: what was sent', 'POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nabc', ok({ method: 'POST', headers: [['Content-Length', '1'], ['Content-Length', '2']], body: 'abc' })],
    ['chunked with extensions and trailers', 'POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3;x=1\r\nabc\r\n1\r\nd\r\n0\r\nT: 1\r\n\r\n', ok({ method: 'POST', headers: [['Transfer-Encoding', 'gzip, chunked']], body: 'abcd' })],
    ['binary body bytes are kept', 'POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\n\x00\xff\r\n', ok({ method: 'POST', headers: [['Content-Length', '4']], body: '\x00\xff\r\n' })],
    ['empty', '', { problem: 'empty request' }],
    ['bad request line', 'GET\r\n\r\n', { problem: 'bad request line "GET" (expected METHOD target HTTP/x.y)' }],
    ['bad header line', 'GET / HTTP/1.1\r\nno colon\r\n\r\n', { problem: 'bad header line "no colon" (expected Name: value)' }],
    ['a header that is not UTF-8', 'GET / HTTP/1.1\r\nX: \xff\r\n\r\n', { problem: 'the request line or a header is not valid UTF-8' }],
  ];
  for (const [name, raw, expected] of cases) test(name, () => assert.deepEqual(parseRawRequest(raw), expected));
});

test('ftwRuleId', () => {
  const cases: readonly [string, string | undefined][] = [
    ['id "942100"', '942100'],
    ['id "942100', '942100'],
    ['id:942100', '942100'],
    ['"942100"', '942100'],
    ['942100', '942100'],
    ['Inbound Anomaly Score Exceeded', undefined],
    ['id "942100"|id "942101"', undefined],
  ];
  for (const [pattern, id] of cases) assert.equal(ftwRuleId(pattern), id, pattern);
});

// ---------------------------------------------------------------------------------------
// The whole CRS 3.3.4 regression suite (vendored in test/fixtures/crs-3.3.4-regression-tests).

const CRS = fileURLToPath(new URL('../../fixtures/crs-3.3.4-regression-tests', import.meta.url));

test('CRS 3.3.4 regression tests: every file loads, every stage becomes field values', () => {
  const files = yamlFiles(CRS);
  let tests = 0;
  let stages = 0;
  let disabled = 0;
  let withBody = 0;
  const problems: string[] = [];
  const fieldProblems: string[] = [];
  const titles = new Set<string>();
  for (const file of files) {
    const r = parseFtwFile(readFileSync(file, 'utf8'));
    for (const p of r.problems) problems.push(`${file.slice(CRS.length + 1)}:${p.line + 1}: ${p.message}`);
    for (const t of r.tests) {
      tests++;
      titles.add(t.title);
      if (t.enabled === false) disabled++;
      for (const s of t.stages) {
        stages++;
        if (s.request.body !== undefined) withBody++;
        assert.ok(s.request.source && s.request.source.end > s.request.source.start, t.title);
        const f = requestFields(s.request);
        for (const p of f.problems) fieldProblems.push(`${t.title}: ${p}`);
        for (const e of prepareFields(f.fields).errors) fieldProblems.push(`${t.title}: ${e.field}: ${e.message}`);
      }
    }
  }
  // The suite's README says 2,438 test cases; the files hold 2,403 `test_title` entries
  // (2,410 occurrences of the word, 7 of them in comments), each with one stage. One title,
  // 941160-10, is used twice. 7 tests are in files with `enabled: false`.
  assert.deepEqual(
    { files: files.length, tests, stages, disabled, uniqueTitles: titles.size, withBody },
    { files: 178, tests: 2403, stages: 2403, disabled: 7, uniqueTitles: 2402, withBody: 1790 },
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(fieldProblems, []);
});

describe('what a web server does before the WAF sees a request', () => {
  const req = (httpVersion: string, headers: [string, string][] = [['Host', 'localhost']], body?: string, method = 'GET', url = '/') => ({ method, url, httpVersion, headers, ...(body !== undefined ? { body } : {}) });
  const rejections: [name: string, request: ReturnType<typeof req>, reason: string | undefined][] = [
    ['HTTP/1.1', req('HTTP/1.1'), undefined],
    ['HTTP/1.0', req('HTTP/1.0'), undefined],
    ['HTTP/0.9 (well-formed)', req('HTTP/0.9'), undefined],
    ['HTTP/3.0 (well-formed, unknown: the WAF decides, 920430)', req('HTTP/3.0'), undefined],
    ['"1.1" (920430-6)', req('1.1'), 'the request line\'s version "1.1" is not HTTP/x.y (RFC 9112): a server answers 400'],
    ['"HTTP/2" (one digit)', req('HTTP/2'), 'the request line\'s version "HTTP/2" is not HTTP/x.y (RFC 9112): a server answers 400'],
    ['a backslash (920100-13)', req('HTTP\\1.0'), 'the request line\'s version "HTTP\\\\1.0" is not HTTP/x.y (RFC 9112): a server answers 400'],
    ['no version', req(''), 'the request line\'s version "" is not HTTP/x.y (RFC 9112): a server answers 400'],
    ['a bare CR in a header value (921140-1)', req('HTTP/1.1', [['SomeHeader', 'Headerdata\rInjectedHeader: x']]), 'the header "SomeHeader" holds a line break (RFC 9110 §5.5): a server answers 400'],
    ['an encoded CR is just text (921140-2)', req('HTTP/1.1', [['SomeHeader', 'Headerdata%0dInjectedHeader: x']]), undefined],
    ['white space before the method (920100-2)', req('HTTP/1.1', [], undefined, '     GET'), 'the method "     GET" is not an HTTP token (RFC 9110 §9.1): a server answers 400'],
    ['a tab before the method (920100-12)', req('HTTP/1.1', [], undefined, '\tGET'), 'the method "\\tGET" is not an HTTP token (RFC 9110 §9.1): a server answers 400'],
    ['an unknown method is a token: the WAF decides (911100)', req('HTTP/1.1', [], undefined, 'PROPFIND'), undefined],
    ['CONNECT without a port (920100-5)', req('HTTP/1.1', [], undefined, 'CONNECT', 'www.cnn.com'), 'CONNECT "www.cnn.com" is not host:port (RFC 9112 §3.2.3): a server answers 400'],
    ['CONNECT host:port', req('HTTP/1.1', [], undefined, 'CONNECT', 'www.cnn.com:80'), undefined],
    ['a Content-Length that is not a number (920160-1)', req('HTTP/1.1', [['Content-Length', 'NotDigits']]), 'the Content-Length "NotDigits" is invalid (RFC 9112 §6.3: the framing is unrecoverable): a server answers 400'],
    ['two different Content-Lengths', req('HTTP/1.1', [['Content-Length', '1'], ['Content-Length', '2']]), 'the Content-Length "1", "2" is invalid (RFC 9112 §6.3: the framing is unrecoverable): a server answers 400'],
    ['the same Content-Length twice', req('HTTP/1.1', [['Content-Length', '3'], ['Content-Length', '3']], 'a=b'), undefined],
    ['Content-Length beside chunked: Transfer-Encoding frames it', req('HTTP/1.1', [['Content-Length', 'x'], ['Transfer-Encoding', 'chunked']]), undefined],
  ];
  for (const [name, request, reason] of rejections) test(`serverRejection: ${name}`, () => assert.equal(serverRejection(request), reason));

  const incomplete: [name: string, request: ReturnType<typeof req>, reason: string | undefined][] = [
    ['Content-Length 50 and no body (920340-2)', req('HTTP/1.1', [['Content-Length', '50']]), 'the body is shorter than its Content-Length (0 of 50 bytes): the server waits for the rest until the client gives up'],
    ['as long as declared', req('HTTP/1.1', [['Content-Length', '3']], 'a=b'), undefined],
    ['chunked: the length does not count', req('HTTP/1.1', [['Content-Length', '50'], ['Transfer-Encoding', 'chunked']], 'a=b'), undefined],
    ['an invalid length', req('HTTP/1.1', [['Content-Length', 'x']]), undefined],
    ['no length', req('HTTP/1.1'), undefined],
  ];
  for (const [name, request, reason] of incomplete) test(`incompleteBody: ${name}`, () => assert.equal(incompleteBody(request), reason));

  test('parseFtwFile marks the stages', () => {
    const r = parseFtwFile('tests:\n  - test_title: t\n    stages:\n      - stage:\n          input: {version: "1.1"}\n          output: {status: [400]}\n      - stage:\n          input: {stop_magic: true, headers: {Content-Length: "50"}}\n          output: {expect_error: true}\n');
    assert.deepEqual(r.problems, []);
    assert.deepEqual(r.tests[0].stages.map((s) => [s.rejected !== undefined, s.incomplete !== undefined]), [[true, false], [false, true]]);
  });
});

describe('go-ftw (CRS v4) format', () => {
  test('rule_id and test_id name the tests; unwrapped stages; output.log read; YAML 1.2 (yes is a string)', () => {
    const text = [
      'meta: { author: someone }',
      'rule_id: 942100',
      'tests:',
      '  - test_id: 7',
      '    stages:',
      '      - input: { uri: "/?a=1", headers: { X-Flag: yes, X-On: true } }',
      '        output: { log: { expect_ids: [942100, 942110], no_expect_ids: [920350] }, retry_once: true }',
      '  - stages:',
      '      - input: { uri: "/b" }',
      '        output: { log: { match_regex: "id \\"942100\\"", no_match_regex: x } }',
      '',
    ].join('\n');
    const r = parseFtwFile(text);
    assert.deepEqual(r.problems, []);
    assert.equal(r.format, 'goFtw');
    assert.deepEqual(r.tests.map((t) => [t.title, t.rule]), [['942100-7', '942100'], ['942100-2', '942100']]);
    assert.deepEqual(r.tests[0].stages[0].request.headers, [['Connection', 'close'], ['X-Flag', 'yes'], ['X-On', 'true']]);
    assert.deepEqual(r.tests[0].stages[0].output, { expectIds: ['942100', '942110'], noExpectIds: ['920350'] });
    assert.equal(r.tests[0].stages[0].unsupported, undefined);
    assert.deepEqual(r.tests[1].stages[0].output, { matchRegex: 'id "942100"', noMatchRegex: 'x' });
  });

  test('keys Rulesmith does not run are listed per stage; a bad expect_ids is a problem with its line', () => {
    const r = parseFtwFile(['rule_id: 1', 'tests:', '  - stages:', '      - input: { uris: ["/a"], save_cookie: true }', '        output: { isolated: true, response_contains: a, log: { expect_ids: [1], foo: 1 } }', ''].join('\n'));
    assert.deepEqual(r.tests[0].stages[0].unsupported, ['input.uris', 'input.save_cookie', 'output.isolated', 'output.response_contains', 'output.log.foo']);
    const bad = parseFtwFile(['rule_id: 1', 'tests:', '  - stages:', '      - input: {}', '        output: { log: { expect_ids: ["942100"] } }', ''].join('\n'));
    assert.deepEqual(bad.problems, [{ line: 4, message: 'test 1-1, stage 1: output.log.expect_ids must be a list of rule ids (e.g. [942100]), not ["942100"]' }]);
    // The 3.3.x format refuses keys it does not run too (a typo is never passed unchecked).
    const old = parseFtwFile(['tests:', '  - test_title: t', '    stages:', '      - stage:', '          input: {}', '          output: { log_contain: x }', ''].join('\n'));
    assert.deepEqual(old.tests[0].stages[0].unsupported, ['output.log_contain']);
  });

  test('the request go-ftw sends: defaults, Content-Type and re-encoding for form data, Connection, Content-Length, headers sorted', () => {
    assert.deepEqual(goFtwInputRequest({ data: 'a=1 2&b&c=x/y&' }).request, {
      method: 'GET',
      url: '/',
      httpVersion: 'HTTP/1.1',
      headers: [['Connection', 'close'], ['Content-Length', '15'], ['Content-Type', 'application/x-www-form-urlencoded']],
      body: 'a=1+2&b&c=x%2Fy',
    });
    // Data holding `%` or `+` is sent as written; another Content-Type too.
    assert.equal(goFtwInputRequest({ method: 'POST', data: 'a=1+2 3' }).request!.body, 'a=1+2 3');
    assert.equal(goFtwInputRequest({ method: 'POST', headers: { 'Content-Type': 'application/json' }, data: '{"a": "b c"}' }).request!.body, '{"a": "b c"}');
    // A POST without data still gets Content-Length: 0; autocomplete_headers: false adds nothing.
    assert.deepEqual(goFtwInputRequest({ method: 'POST' }).request!.headers, [['Connection', 'close'], ['Content-Length', '0']]);
    assert.deepEqual(goFtwInputRequest({ method: 'POST', autocomplete_headers: false, headers: { 'Content-Length': '3' }, data: 'a b' }).request, { method: 'POST', url: '/', httpVersion: 'HTTP/1.1', headers: [['Content-Length', '3']], body: 'a b' });
    // Multipart data: every LF becomes CRLF.
    assert.equal(goFtwInputRequest({ method: 'POST', headers: { 'Content-Type': 'multipart/form-data; boundary=x' }, data: '--x\nContent-Disposition: form-data; name="a"\n\n1\n--x--\n' }).request!.body, '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n');
    assert.deepEqual(goFtwInputRequest({ data: ['a', 'b'] }), { problem: 'input.data must be a string (go-ftw reads it as one), not ["a","b"]' });
  });

  test('goFormEncode: pieces without `=` are escaped whole and kept, a final `&` dropped (bytes in, as UTF-8 on the wire)', () => {
    assert.equal(goFormEncode('x=<a b>&fl ag&&y=\xc3\xa9&'), 'x=%3Ca+b%3E&fl+ag&&y=%C3%A9');
  });
});
