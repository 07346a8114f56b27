import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkspaceNames } from '../../../server/src/lsp/workspaceNames';

test('list names and map keys are gathered from expressions, deduplicated and sorted', () => {
  const names = new WorkspaceNames();
  assert.deepEqual(
    names.collect([
      'ip.src in $office and any(http.request.headers["x-b"][*] eq "1")',
      'ip.src in $cf.open_proxies or http.request.headers["x-a"][0] eq "2" or http.request.uri.args["token"][0] eq "t"',
      'ip.src in $office and http.request.headers["x-a"][0] eq "3"',
      'this does not parse (',
    ]),
    {
      lists: ['cf.open_proxies', 'office'],
      keys: { 'http.request.headers': ['x-a', 'x-b'], 'http.request.uri.args': ['token'] },
    },
  );
});
