// One numbering of a `.http` file's requests over the wire: a malformed block between two
// good ones is request 2 in Evaluate's lenses (rulesmith/httpRequests, evaluateRequests)
// and in what the zone trace asks for (rulesmith/httpRequest, by index or by the cursor's
// line), so "request 3" is the same request everywhere. The rulesets are the evaluate
// fixtures' (test/fixtures/evaluate/); the `.http` text is sent with each request.
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import {
  EvaluateRequestsRequest,
  HttpRequestRequest,
  HttpRequestsRequest,
  type EvaluateRequestsResult,
  type HttpRequestInfo,
  type HttpRequestParams,
  type HttpRequestResult,
} from '../../server/src/protocol';
import { LspClient, ROOT } from './client';

const DIR = `${ROOT}test/fixtures/evaluate/`;
const httpUri = pathToFileURL(`${DIR}malformed-between.http`).href;
const httpText = [
  '### Home page', //                              0
  'GET https://example.com/ HTTP/1.1', //          1
  '', //                                           2
  '### Broken header', //                          3
  'GET https://example.com/ HTTP/1.1', //          4
  'Bad Header: x', //                              5
  '', //                                           6
  '### Admin area', //                             7
  '# @ip.src 203.0.113.9', //                      8
  'POST https://example.com/admin/users', //       9
  'Content-Type: text/plain', //                  10
  '', //                                          11
  'é', //                                         12
  '', //                                          13
].join('\n');

let client: LspClient;

before(async () => {
  client = await LspClient.start({ settings: () => ({}) });
  client.connection.onRequest('workspace/workspaceFolders', () => [{ uri: pathToFileURL(DIR).href, name: 'evaluate' }]);
});
after(async () => {
  await client?.close();
});

const at = (where: Pick<HttpRequestParams, 'index' | 'line'>) => client.request<HttpRequestResult>(HttpRequestRequest.method, { httpUri, httpText, ...where });

describe('a malformed block between two good ones', () => {
  test("Evaluate's lenses number it: 0 Home page, 1 Broken header (malformed), 2 Admin area", async () => {
    const { requests } = await client.request<{ requests: HttpRequestInfo[] }>(HttpRequestsRequest.method, { httpUri, httpText });
    assert.deepEqual(
      requests.map((r) => [r.index, r.line, r.name, r.problems]),
      [
        [0, 1, 'Home page', []],
        [1, 4, 'Broken header', ['line 6: bad header name "Bad Header": a header name is letters, digits and !#$%&\'*+.^_`|~- (no spaces)']],
        [2, 9, 'Admin area', []],
      ],
    );
    const evaluated = await client.request<EvaluateRequestsResult>(EvaluateRequestsRequest.method, { httpUri, httpText });
    assert.equal(evaluated.error, undefined);
    assert.deepEqual(
      evaluated.requests.map((r) => [r.index, r.verdict?.title ?? null]),
      [
        [0, 'Passed — no rule acted'],
        [1, null],
        [2, 'Blocked by block-admin (http_request_firewall_custom)'],
      ],
    );
  });

  test('the trace asks for request 2 and gets the Admin area, with what it sends', async () => {
    assert.deepEqual(await at({ index: 2 }), {
      request: { index: 2, name: 'Admin area', summary: 'POST /admin/users', line: 9, problems: [] },
      content: {
        method: 'POST',
        url: 'https://example.com/admin/users',
        httpVersion: 'HTTP/1.1',
        headers: [['Content-Type', 'text/plain']],
        // "é" as UTF-8 bytes (C3 A9).
        bodyBase64: 'w6k=',
        meta: { 'ip.src': '203.0.113.9' },
      },
      count: 3,
    });
  });

  test('request 1 is the malformed one: its problem, nothing to send', async () => {
    const r = await at({ index: 1 });
    assert.equal(r.content, undefined);
    assert.deepEqual([r.request?.index, r.request?.name, r.request?.problems.length, r.count], [1, 'Broken header', 1, 3]);
  });

  test('the cursor: each line belongs to the block of the ### above it', async () => {
    const byLine: [number, number][] = [];
    for (let line = 0; line <= 13; line++) byLine.push([line, (await at({ line })).request!.index]);
    assert.deepEqual(byLine, [
      [0, 0], [1, 0], [2, 0],
      [3, 1], [4, 1], [5, 1], [6, 1],
      [7, 2], [8, 2], [9, 2], [10, 2], [11, 2], [12, 2], [13, 2],
    ]);
  });

  test('an index past the end: no request, and how many there are', async () => {
    assert.deepEqual(await at({ index: 3 }), { count: 3 });
  });
});
