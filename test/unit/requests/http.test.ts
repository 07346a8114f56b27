import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseHttpBlocks, parseHttpFile } from '../../../server/src/requests/http';
import type { RequestProblem, SampleRequest } from '../../../server/src/requests/types';

const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/requests/${name}`, import.meta.url), 'utf8');

/** The source range of a request from its first and last line's text (each unique in the file). */
function span(text: string, firstLine: string, lastLine: string, requestLine: number): SampleRequest['source'] {
  const start = text.indexOf(firstLine);
  const last = text.indexOf(lastLine, start);
  assert.ok(start >= 0 && last >= 0, `${firstLine} / ${lastLine} in the fixture`);
  return { start, end: last + lastLine.length, line: requestLine };
}

describe('parseHttpFile: fixtures', () => {
  test('two-requests.http: URL-only GET, POST with headers and a JSON body', () => {
    const text = fixture('two-requests.http');
    const expected: SampleRequest[] = [
      {
        name: 'Home page',
        method: 'GET',
        url: 'https://example.com/',
        httpVersion: 'HTTP/1.1',
        headers: [],
        meta: {},
        source: span(text, 'https://example.com/\n', 'https://example.com/', 1),
      },
      {
        name: 'Login',
        method: 'POST',
        url: 'https://example.com/login?next=%2Fhome',
        httpVersion: 'HTTP/1.1',
        headers: [
          ['Content-Type', 'application/json'],
          ['User-Agent', 'rulesmith-test'],
        ],
        body: '{"user": "admin",\n "password": "x"}',
        meta: {},
        source: span(text, 'POST https', ' "password": "x"}', 4),
      },
    ];
    assert.deepEqual(parseHttpFile(text), { requests: expected, problems: [] });
  });

  test('metadata.http: fields, @name, REST Client directives, comments among headers, query continuation lines', () => {
    const text = fixture('metadata.http');
    const expected: SampleRequest[] = [
      {
        name: 'germany',
        method: 'GET',
        url: '/admin',
        httpVersion: 'HTTP/2',
        headers: [
          ['Host', 'Example.COM:8443'],
          ['Cookie', 'session=abc; theme=dark'],
        ],
        meta: { 'ip.src': '203.0.113.9', 'ip.src.country': 'DE', 'cf.bot_management.score': '12', ssl: 'false' },
        source: span(text, '# @ip.src 203', 'Cookie: session=abc; theme=dark', 9),
      },
      {
        name: 'Detection ids',
        method: 'GET',
        url: 'http://example.com/search?q=waf&page=2',
        httpVersion: 'HTTP/1.1',
        headers: [],
        meta: {
          'cf.bot_management.detection_ids': '[1, 33554433]',
          'http.request.jwt.claims.sub': '{"cfg": ["user"]}',
          'http.request.body.raw': '{"hex": "00ff"}',
        },
        source: span(text, '# @cf.bot_management.detection_ids', '  &page=2', 18),
      },
    ];
    assert.deepEqual(parseHttpFile(text), { requests: expected, problems: [] });
  });

  test('malformed.http: each bad request is skipped with a problem on its line; variables are kept with a note', () => {
    const text = fixture('malformed.http');
    const r = parseHttpFile(text);
    const expectedProblems: RequestProblem[] = [
      { line: 0, message: 'variables are not supported: this file variable is ignored' },
      { line: 3, message: 'no request line after this metadata (expected METHOD URL)' },
      { line: 8, message: 'bad header line "this is not a header": expected "Name: value" (an empty line must separate the headers from the body)' },
      { line: 11, message: 'invalid URL "example.com/path": expected http://…, https://… or a path starting with /' },
      { line: 14, message: 'invalid character "(" in method "GE(T" (a method is letters, digits and !#$%&\'*+.^_`|~-)' },
      { line: 17, message: 'metadata: unknown field "ip.source" (did you mean ip.src?)' },
      { line: 21, message: 'metadata: cf.bot_management.score: expected an integer, got "high"' },
      { line: 25, message: 'the URL "/path" is a path: add a Host header or write the full URL (https://host/path)' },
      { line: 28, message: 'unknown HTTP version "HTTP/x" (expected e.g. HTTP/1.1)' },
      { line: 31, message: 'invalid URL "https://example.com/a b": spaces must be percent-encoded (%20)' },
      { line: 35, message: 'bad header name "Bad Header": a header name is letters, digits and !#$%&\'*+.^_`|~- (no spaces)' },
      { line: 38, message: 'variables are not supported: {{host}} is left as written' },
    ];
    assert.deepEqual(r.problems, expectedProblems);
    assert.deepEqual(r.requests, [
      {
        name: 'Variables are kept',
        method: 'GET',
        url: 'https://{{host}}/items?id={{id}}',
        httpVersion: 'HTTP/1.1',
        headers: [],
        meta: {},
        source: span(text, 'GET https://{{host}}', 'id={{id}}', 38),
      },
      {
        name: 'Good',
        method: 'DELETE',
        url: 'https://example.com/items/1',
        httpVersion: 'HTTP/1.1',
        headers: [],
        meta: {},
        source: span(text, 'DELETE https', '/items/1', 41),
      },
    ]);
    // Every problem line is inside the file and points at a non-empty line.
    const lines = text.split('\n');
    for (const p of r.problems) assert.notEqual(lines[p.line]?.trim() ?? '', '', `line ${p.line}`);
  });
});

/** Cases written inline: [name, file text, expected requests (without source), expected problem messages]. */
const INLINE: readonly [string, string, Omit<SampleRequest, 'source'>[], string[]][] = [
  ['empty file', '', [], []],
  ['only comments and separators', '# hello\n// there\n###\n\n### x\n', [], []],
  [
    'a URL alone is a GET, the first block needs no ###',
    'http://example.com/a?b=1\n',
    [{ method: 'GET', url: 'http://example.com/a?b=1', httpVersion: 'HTTP/1.1', headers: [], meta: {} }],
    [],
  ],
  [
    'CRLF line ends are kept in the body; only the final line break is removed',
    'POST https://example.com/ HTTP/1.0\r\nContent-Type: text/plain\r\n\r\nline 1\r\nline 2\r\n\r\n### next\r\nGET https://example.com/2\r\n',
    [
      {
        method: 'POST',
        url: 'https://example.com/',
        httpVersion: 'HTTP/1.0',
        headers: [['Content-Type', 'text/plain']],
        body: 'line 1\r\nline 2',
        meta: {},
      },
      { name: 'next', method: 'GET', url: 'https://example.com/2', httpVersion: 'HTTP/1.1', headers: [], meta: {} },
    ],
    [],
  ],
  [
    'lower-case known methods are upper-cased; other token methods are kept as written',
    'patch https://example.com/\n###\nPURGE https://example.com/\n###\nfoo https://example.com/\n',
    [
      { method: 'PATCH', url: 'https://example.com/', httpVersion: 'HTTP/1.1', headers: [], meta: {} },
      { method: 'PURGE', url: 'https://example.com/', httpVersion: 'HTTP/1.1', headers: [], meta: {} },
      { method: 'foo', url: 'https://example.com/', httpVersion: 'HTTP/1.1', headers: [], meta: {} },
    ],
    [],
  ],
  [
    'version spelled in lower case is normalized; HTTP/2 and HTTP/3 accepted',
    'GET https://example.com/ http/1.1\n###\nGET https://example.com/ HTTP/3\n',
    [
      { method: 'GET', url: 'https://example.com/', httpVersion: 'HTTP/1.1', headers: [], meta: {} },
      { method: 'GET', url: 'https://example.com/', httpVersion: 'HTTP/3', headers: [], meta: {} },
    ],
    [],
  ],
  [
    'the body keeps lines that look like comments or separators of other tools',
    'POST https://example.com/\n\n# not a comment\n// nor this\n{"a": "{{not a variable?}}"}'.replace('{{not a variable?}}', 'x'),
    [{ method: 'POST', url: 'https://example.com/', httpVersion: 'HTTP/1.1', headers: [], body: '# not a comment\n// nor this\n{"a": "x"}', meta: {} }],
    [],
  ],
  [
    'header values are trimmed, may be empty and may contain colons',
    'GET https://example.com/\nX-Empty:\nX-Time:   12:30:00  \nHost:example.com\n',
    [
      {
        method: 'GET',
        url: 'https://example.com/',
        httpVersion: 'HTTP/1.1',
        headers: [
          ['X-Empty', ''],
          ['X-Time', '12:30:00'],
          ['Host', 'example.com'],
        ],
        meta: {},
      },
    ],
    [],
  ],
  [
    'a non-ASCII body is stored as UTF-8 bytes',
    'POST https://example.com/\n\ncafé',
    [{ method: 'POST', url: 'https://example.com/', httpVersion: 'HTTP/1.1', headers: [], body: 'caf\xc3\xa9', meta: {} }],
    [],
  ],
  [
    '// @name and @name = value forms; the ### text is the name otherwise',
    '### first\n// @name = renamed\nGET https://example.com/1\n### second\nGET https://example.com/2\n',
    [
      { name: 'renamed', method: 'GET', url: 'https://example.com/1', httpVersion: 'HTTP/1.1', headers: [], meta: {} },
      { name: 'second', method: 'GET', url: 'https://example.com/2', httpVersion: 'HTTP/1.1', headers: [], meta: {} },
    ],
    [],
  ],
  [
    'metadata with an empty Bytes value, IPv6 and an edge-context pseudo-field',
    '# @http.referer\n# @ip.src 2001:db8::1\nGET https://example.com/\n',
    [{ method: 'GET', url: 'https://example.com/', httpVersion: 'HTTP/1.1', headers: [], meta: { 'http.referer': '', 'ip.src': '2001:db8::1' } }],
    [],
  ],
  [
    'bad metadata values: Bool, Ip, JSON array',
    '# @ssl maybe\n# @ip.src 300.1.1.1\n# @cf.bot_management.detection_ids 1,2\nGET https://example.com/\n',
    [],
    [
      'metadata: ssl: expected true or false, got "maybe"',
      'metadata: ip.src: expected an IP address (Ip), got "300.1.1.1"',
      'metadata: cf.bot_management.detection_ids: expected a JSON array, got "1,2"',
    ],
  ],
  [
    '# @todo is a comment; a name close to a field or with a dot is checked as a field',
    '# @todo check this\n# @sll true\n# @cf.foo 1\n# @country DE\nGET https://example.com/\n###\n# @todo later\nGET https://example.com/2\n',
    [{ method: 'GET', url: 'https://example.com/2', httpVersion: 'HTTP/1.1', headers: [], meta: {} }],
    ['metadata: unknown field "sll" (did you mean ssl?)', 'metadata: unknown field "cf.foo"', 'metadata: unknown field "country" (did you mean ip.src.country?)'],
  ],
  [
    'URL problems: other scheme, no host, bad port, control character',
    'GET ftp://example.com/\n###\nGET http:///path\n###\nGET http://example.com:99999/\n###\nGET http://example.com/\x01\n',
    [],
    [
      'invalid URL "ftp://example.com/": only http and https URLs are supported',
      'invalid URL "http:///path": no host',
      'invalid URL "http://example.com:99999/": bad port "99999"',
      'invalid URL "http://example.com/\\u0001": control characters must be percent-encoded',
    ],
  ],
  [
    'IPv6 host, user info and port are valid URL parts',
    'GET http://[2001:db8::1]:8080/x\n###\nGET https://user:pw@example.com/\n',
    [
      { method: 'GET', url: 'http://[2001:db8::1]:8080/x', httpVersion: 'HTTP/1.1', headers: [], meta: {} },
      { method: 'GET', url: 'https://user:pw@example.com/', httpVersion: 'HTTP/1.1', headers: [], meta: {} },
    ],
    [],
  ],
  [
    'a variable in a header is noted once; the request is kept',
    'GET https://example.com/\nAuthorization: Bearer {{token}}\n',
    [{ method: 'GET', url: 'https://example.com/', httpVersion: 'HTTP/1.1', headers: [['Authorization', 'Bearer {{token}}']], meta: {} }],
    ['variables are not supported: {{token}} is left as written'],
  ],
];

describe('parseHttpFile: inline cases', () => {
  for (const [name, text, requests, problems] of INLINE) {
    test(name, () => {
      const r = parseHttpFile(text);
      assert.deepEqual(
        r.requests.map(({ source: _source, ...rest }) => rest),
        requests,
      );
      assert.deepEqual(
        r.problems.map((p) => p.message),
        problems,
      );
      for (const req of r.requests) {
        assert.ok(req.source, 'source is set');
        assert.equal(text.split(/\r?\n/)[req.source.line].trim().length > 0, true, 'the request line is a non-empty line');
        assert.ok(req.source.start <= req.source.end && req.source.end <= text.length);
      }
    });
  }

  test('source: start at the first comment/metadata line, line of the request line, end at the last body line', () => {
    const text = 'GET https://a.example/\n\n###  two \n# @ip.src 203.0.113.1\nPOST https://a.example/x\nA: 1\n\nbody\n\n\n';
    const r = parseHttpFile(text);
    assert.deepEqual(r.requests.map((q) => [q.name, q.source]), [
      [undefined, { start: 0, end: 22, line: 0 }],
      ['two', { start: text.indexOf('# @ip'), end: text.indexOf('body') + 4, line: 4 }],
    ]);
  });

  test('never throws on odd input', () => {
    const odd = ['###', '\n\n\n', '\r', 'GET', ':', 'GET https://example.com/\n:\n', '# @', '# @ ', '@x=1', '{{', '\u0000\uffff', 'GET https://example.com/\n\n< x', '#'.repeat(10000)];
    for (const text of odd) {
      const r = parseHttpFile(text);
      assert.ok(Array.isArray(r.requests) && Array.isArray(r.problems), JSON.stringify(text).slice(0, 40));
    }
  });
});

describe('parseHttpBlocks: every block, malformed ones included, in one numbering', () => {
  test('good, empty, malformed, metadata only, good with a note: exact blocks', () => {
    const text = [
      '# a comment before any request', //            0: block without request or problem, not counted
      '### Home', //                                   1
      'GET https://example.com/', //                   2
      '###', //                                        3: empty block, not counted
      '', //                                           4
      '### Broken', //                                 5
      '# why it is here', //                           6
      'GET https://example.com/ HTTP/1.1', //          7
      'Bad Header: x', //                              8
      '### Only metadata', //                          9
      '# @ip.src 203.0.113.9', //                     10
      '###', //                                       11
      '# @name token', //                             12
      'GET https://example.com/', //                  13
      'Authorization: Bearer {{token}}', //           14
    ].join('\r\n');
    const home = parseHttpFile(text).requests[0];
    const blocks = parseHttpBlocks(text);
    assert.deepEqual(
      blocks.map(({ request, ...b }) => ({ ...b, request: request && `${request.method} ${request.url}` })),
      [
        { index: 0, startLine: 1, endLine: 2, name: 'Home', line: 2, problems: [], request: 'GET https://example.com/' },
        {
          index: 1,
          startLine: 5,
          endLine: 8,
          name: 'Broken',
          line: 7,
          problems: [{ line: 8, message: 'bad header name "Bad Header": a header name is letters, digits and !#$%&\'*+.^_`|~- (no spaces)' }],
          request: undefined,
        },
        { index: 2, startLine: 9, endLine: 10, name: 'Only metadata', line: 10, problems: [{ line: 10, message: 'no request line after this metadata (expected METHOD URL)' }], request: undefined },
        { index: 3, startLine: 11, endLine: 14, name: 'token', line: 13, problems: [{ line: 14, message: 'variables are not supported: {{token}} is left as written' }], request: 'GET https://example.com/' },
      ],
    );
    assert.deepEqual(blocks[0].request, home, 'the request is the one parseHttpFile returns');
  });

  test('parseHttpFile is the blocks\' requests and problems', () => {
    const text = 'GET https://a.example/\n###\nGET\n###\nPOST https://a.example/x\n';
    const blocks = parseHttpBlocks(text);
    assert.deepEqual(parseHttpFile(text), { requests: blocks.flatMap((b) => (b.request ? [b.request] : [])), problems: blocks.flatMap((b) => b.problems) });
    assert.deepEqual(blocks.map((b) => [b.index, b.line, b.request?.url ?? null]), [[0, 0, 'https://a.example/'], [1, 2, null], [2, 4, 'https://a.example/x']]);
  });
});
