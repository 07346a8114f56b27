// The managed-only `crs.*` fields from a sample request, the CRS expression shape end to
// end, and the diagnostics a user gets for managed-only names.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkExpression, compileExpression, prepareFields } from '../../../server/src/language/index';
import { requestFields } from '../../../server/src/requests/fields';
import { parseHttpFile } from '../../../server/src/requests/http';

function fieldsOf(http: string): Record<string, unknown> {
  const { requests, problems } = parseHttpFile(http);
  assert.deepEqual(problems, []);
  const r = requestFields(requests[0]);
  assert.deepEqual(r.problems, []);
  const plain = JSON.parse(JSON.stringify(r.fields)) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(plain).filter(([k]) => k.startsWith('crs.')));
}

function matches(http: string, expression: string): boolean {
  const { requests } = parseHttpFile(http);
  const prepared = prepareFields(requestFields(requests[0]).fields);
  assert.deepEqual(prepared.errors, []);
  const c = compileExpression(expression, { allowManaged: true });
  assert.deepEqual(c.diagnostics.map((d) => d.message), []);
  return c.filter!.matches(prepared.values);
}

const FORM = `POST http://example.com/a%20b/login.php?id=1%27+or+1%3D1&x=%u0041 HTTP/1.1
Host: example.com
Cookie: __utma=select a from b;  sid=abc
Content-Type: application/x-www-form-urlencoded
X-Forwarded-For: 10.0.0.1

q=hello+world&z=%3Cscript%3E
`;

describe('crs.* request fields', () => {
  test('urlencoded form: every crs field', () => {
    assert.deepEqual(fieldsOf(FORM), {
      'crs.args': { id: ["1' or 1=1"], x: ['%u0041'], q: ['hello world'], z: ['<script>'] },
      'crs.args_names': ['id', 'x', 'q', 'z'],
      'crs.args_get': { id: ["1' or 1=1"], x: ['%u0041'] },
      'crs.args_get_names': ['id', 'x'],
      'crs.args_post': { q: ['hello world'], z: ['<script>'] },
      'crs.args_post_names': ['q', 'z'],
      'crs.args_combined_size': 2 + 9 + 1 + 6 + 1 + 11 + 1 + 8,
      'crs.request_cookies': { __utma: ['select a from b'], sid: ['abc'] },
      'crs.request_cookies_names': ['__utma', 'sid'],
      'crs.request_headers': {
        host: ['example.com'],
        cookie: ['__utma=select a from b;  sid=abc'],
        'content-type': ['application/x-www-form-urlencoded'],
        'x-forwarded-for': ['10.0.0.1'],
      },
      'crs.request_headers_names': ['Host', 'Cookie', 'Content-Type', 'X-Forwarded-For'],
      'crs.request_uri': "/a b/login.php?id=1'+or+1=1&x=%u0041",
      'crs.request_uri_raw': 'http://example.com/a%20b/login.php?id=1%27+or+1%3D1&x=%u0041',
      'crs.request_filename': '/a b/login.php',
      'crs.request_basename': 'login.php',
      'crs.query_string': 'id=1%27+or+1%3D1&x=%u0041',
      'crs.request_body': 'q=hello+world&z=%3Cscript%3E',
      'crs.request_body_length': 28,
      'crs.request_line': 'POST http://example.com/a%20b/login.php?id=1%27+or+1%3D1&x=%u0041 HTTP/1.1',
      'crs.request_method': 'POST',
      'crs.request_protocol': 'HTTP/1.1',
      'crs.files': [],
      'crs.files_names': [],
      'crs.inbound_data_error': false,
      'crs.files_combined_size': 0,
      'crs.multipart_part_headers': [],
      'crs.xml': [],
      'crs.xml_attributes': [],
      'crs.reqbody_processor': 'URLENCODED',
      'crs.reqbody_error': false,
      'crs.multipart_strict_error': false,
      'crs.remote_addr': '192.0.2.1',
    });
  });

  test('multipart: files, their field names, part headers; non-file parts are ARGS_POST', () => {
    const http = [
      'POST https://example.com/upload HTTP/1.1',
      'Content-Type: multipart/form-data; boundary=XX',
      '',
      '--XX',
      'Content-Disposition: form-data; name="title"',
      '',
      'My <b>file</b>',
      '--XX',
      'Content-Disposition: form-data; name="doc"; filename="shell.php"',
      'Content-Type: application/octet-stream',
      '',
      '<?php echo 1; ?>',
      '--XX--',
    ].join('\r\n');
    const f = fieldsOf(http);
    assert.deepEqual(f['crs.args_post'], { title: ['My <b>file</b>'] });
    assert.deepEqual(f['crs.files'], ['shell.php']);
    assert.deepEqual(f['crs.files_names'], ['doc']);
    assert.equal(f['crs.files_combined_size'], 16);
    assert.deepEqual(f['crs.multipart_part_headers'], [
      'Content-Disposition: form-data; name="title"',
      'Content-Disposition: form-data; name="doc"; filename="shell.php"',
      'Content-Type: application/octet-stream',
    ]);
    assert.equal(f['crs.reqbody_processor'], 'MULTIPART');
    assert.equal(f['crs.reqbody_error'], false);
    assert.equal(f['crs.multipart_strict_error'], false);
  });

  test('JSON body nested thousands deep: read without overflowing the stack; deeper than 10,000 is REQBODY_ERROR', () => {
    const deep = (n: number) => fieldsOf(`POST https://example.com/api\nContent-Type: application/json\n\n${'['.repeat(n)}"x"${']'.repeat(n)}`);
    const ok = deep(5_000);
    assert.equal(ok['crs.reqbody_error'], false);
    assert.deepEqual(ok['crs.args_names'], [`json${'.0'.repeat(5_000)}`]);
    assert.equal(deep(10_000)['crs.reqbody_error'], false);
    assert.equal(deep(10_001)['crs.reqbody_error'], true);
  });

  test('multipart without a closing boundary is a strict error', () => {
    const http = ['POST https://example.com/upload', 'Content-Type: multipart/form-data; boundary=XX', '', '--XX', 'Content-Disposition: form-data; name="a"', '', 'x'].join('\r\n');
    const f = fieldsOf(http);
    assert.deepEqual(f['crs.args_post'], { a: ['x'] });
    assert.equal(f['crs.multipart_strict_error'], true);
  });

  test('JSON body: leaves become ARGS (not ARGS_POST) named json.<path>; a bad body is REQBODY_ERROR', () => {
    const ok = fieldsOf('POST https://example.com/api?q=1\nContent-Type: application/json\n\n{"a":{"b":"x y"},"c":[1,true,null]}');
    assert.deepEqual(ok['crs.args'], { q: ['1'], 'json.a.b': ['x y'], 'json.c.0': ['1'], 'json.c.1': ['true'], 'json.c.2': [''] });
    assert.deepEqual(ok['crs.args_names'], ['q', 'json.a.b', 'json.c.0', 'json.c.1', 'json.c.2']);
    assert.deepEqual(ok['crs.args_post'], {});
    assert.equal(ok['crs.reqbody_processor'], 'JSON');
    const bad = fieldsOf('POST https://example.com/api\nContent-Type: application/json\n\n{"a":');
    assert.equal(bad['crs.reqbody_error'], true);
    assert.deepEqual(bad['crs.args_post'], {});
  });

  test('XML body: the root element\'s text content (XML:/*) and, apart, the attribute values (XML://@*); unbalanced tags are REQBODY_ERROR', () => {
    const ok = fieldsOf('POST https://example.com/soap\nContent-Type: text/xml\n\n<?xml version="1.0"?><a x="1"><b>one &amp; two</b><![CDATA[<c>]]><d y=\'&lt;2\' z = "3"/></a>');
    assert.deepEqual(ok['crs.xml'], ['one & two<c>']);
    assert.deepEqual(ok['crs.xml_attributes'], ['1', '<2', '3']);
    // An attribute-only document has an empty text content: XML:/* rules (941100, 941110, …) see no script.
    const attr = fieldsOf('POST https://example.com/soap\nContent-Type: text/xml\n\n<a p="&lt;script&gt;alert(1)&lt;/script&gt;"/>');
    assert.deepEqual(attr['crs.xml'], ['']);
    assert.deepEqual(attr['crs.xml_attributes'], ['<script>alert(1)</script>']);
    // A character reference is its code point in UTF-8 (the fields are bytes).
    assert.deepEqual(fieldsOf('POST https://example.com/\nContent-Type: text/xml\n\n<a>&#x3c0;&#60;</a>')['crs.xml'], ['π<']);
    // With the XML processor REQUEST_BODY is empty (the body is read as XML, not as text).
    assert.equal(ok['crs.request_body'], '');
    assert.equal(ok['crs.request_body_length'], 91);
    assert.equal(fieldsOf('POST https://example.com/\nContent-Type: application/x-www-form-urlencoded\n\na=1&b=2')['crs.request_body'], 'a=1&b=2');
    assert.equal(fieldsOf('POST https://example.com/\nContent-Type: text/plain\n\nhello')['crs.request_body'], 'hello');
    assert.equal(fieldsOf('POST https://example.com/\nContent-Type: application/json\n\n{"a":1}')['crs.request_body'], '');
    assert.equal(ok['crs.reqbody_processor'], 'XML');
    const bad = fieldsOf('POST https://example.com/soap\nContent-Type: application/xml\n\n<a><b></a>');
    assert.deepEqual(bad['crs.xml'], []);
    assert.deepEqual(bad['crs.xml_attributes'], []);
    assert.equal(bad['crs.reqbody_error'], true);
  });

  test('REQUEST_FILENAME is split off the raw target before decoding; REQUEST_URI is decoded whole', () => {
    const f = fieldsOf('GET https://example.com/p1%3fp2/%2e%2e/x?q=%3f%zz');
    assert.equal(f['crs.request_filename'], '/p1?p2/../x');
    assert.equal(f['crs.request_basename'], 'x');
    assert.equal(f['crs.request_uri'], '/p1?p2/../x?q=?%zz');
    assert.equal(f['crs.query_string'], 'q=%3f%zz');
    assert.deepEqual(f['crs.args_get'], { q: ['?%zz'] });
  });

  test('REQUEST_BASENAME is empty for a target without a `/` (CONNECT host:port)', () => {
    const r = requestFields({ method: 'CONNECT', url: 'www.cnn.com', httpVersion: 'HTTP/1.1', headers: [['Host', 'localhost']], meta: {}, wire: true } as unknown as Parameters<typeof requestFields>[0]);
    const plain = JSON.parse(JSON.stringify(r.fields)) as Record<string, unknown>;
    assert.equal(plain['crs.request_basename'], '');
  });

  test('the client address follows # @ip.src', () => {
    const f = fieldsOf('# @ip.src 203.0.113.9\nGET https://example.com/');
    assert.equal(f['crs.remote_addr'], '203.0.113.9');
  });
});

describe('CRS expressions end to end', () => {
  const TYPICAL = 'any(op.rx(t.lowercase(t.urlDecodeUni(crs.values(crs.without_matching(crs.request_cookies, "^__utm"))[*]))[*], "(?i)select.+from"))';

  test('the typical converted expression type-checks and evaluates', () => {
    assert.equal(matches(FORM, TYPICAL), false, 'the only SQL-looking cookie is excluded');
    const attack = FORM.replace('sid=abc', 'sid=SELECT%20x%20FROM%20y');
    assert.equal(matches(attack, TYPICAL), true);
  });

  const CASES: ReadonlyArray<readonly [string, boolean]> = [
    ['any(op.detectSQLi(crs.args[*][*]))', true],
    ['any(op.detectXSS(crs.values(crs.args_post)[*]))', true],
    ['any(op.detectSQLi(crs.values(crs.without(crs.args, "ID"))[*]))', false],
    ['op.ipMatch(crs.remote_addr, "192.0.2.0/24")', true],
    ['op.gt(t.length(crs.request_body), 27)', true],
    ['op.gt(t.length(crs.request_body), 28)', false],
    ['len(crs.args_names) eq 4 and len(crs.request_headers_names) eq 4', true],
    ['op.within(crs.request_method, "GET HEAD POST")', true],
    ['any(op.pm(crs.request_headers["x-forwarded-for"][*], "10.0.0.1 127.0.0.1"))', true],
    ['op.endsWith(crs.request_basename, ".php")', true],
    ['any(op.validateByteRange(crs.args_names[*], "97-122"))', false],
    ['op.validateUrlEncoding(crs.request_body)', false],
    ['op.validateUrlEncoding(crs.query_string)', true], // %u0041 is not a %HH escape
    ['any(t.urlDecodeUni(crs.args["x"][*])[*] eq "A")', true],
  ];
  for (const [expression, expected] of CASES) {
    test(`${expression}: ${expected}`, () => assert.equal(matches(FORM, expression), expected));
  }
});

describe('managed-only names in user rules', () => {
  const CASES: ReadonlyArray<readonly [string, string]> = [
    ['t.lowercase(http.host) eq "a"', '`t.lowercase` is a CRS transformation, only available to managed rulesets'],
    ['op.rx(http.host, "a")', '`op.rx` is a CRS operator, only available to managed rulesets'],
    ['any(crs.args_names[*] eq "a")', '`crs.args_names` is a CRS variable, only available to managed rulesets'],
    ['len(crs.values(http.request.uri.args)) gt 1', '`crs.values` is a CRS collection helper, only available to managed rulesets'],
  ];
  for (const [expression, message] of CASES) {
    test(expression, () => {
      const ds = checkExpression(expression).diagnostics.filter((d) => d.severity === 'error');
      assert.deepEqual(
        ds.map((d) => [d.code, d.message]),
        [['managed-only', message]],
      );
    });
  }

  test('managed-only names are never suggested for a user\'s unknown name', () => {
    const d = checkExpression('lowercase(http.host) eq "a"').diagnostics[0];
    assert.equal(d.code, 'unknown-function');
    assert.ok(!JSON.stringify(d).includes('t.lowercase'));
  });

  test('an untranslatable @rx pattern is reported by the checker', () => {
    const d = checkExpression('op.rx(http.host, "\\\\x{100}")', { allowManaged: true }).diagnostics;
    assert.deepEqual(
      d.map((x) => x.message),
      ['invalid value of argument #1: invalid argument: "untranslatable PCRE pattern: \\\\x{100} is not a byte (patterns match bytes)"'],
    );
  });
});
