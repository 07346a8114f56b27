// What starts `rulesmith serve` gives node the heap, helper-thread and memory-reducer flags, except Electron as Node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SERVE_NODE_FLAGS, serveNodeFlags } from '../../server/src/serveNodeFlags';

test('serve is started with a 256 MB first old-generation limit, one V8 helper thread and no memory reducer by Node, and with no flag by Electron as Node', () => {
  assert.deepEqual(SERVE_NODE_FLAGS, ['--initial-old-space-size=256', '--v8-pool-size=1', '--no-memory-reducer']);
  assert.deepEqual(serveNodeFlags({ ...process.versions, electron: undefined } as unknown as NodeJS.ProcessVersions), ['--initial-old-space-size=256', '--v8-pool-size=1', '--no-memory-reducer']);
  assert.deepEqual(serveNodeFlags({ ...process.versions, electron: '30.1.2' } as NodeJS.ProcessVersions), []);
});
