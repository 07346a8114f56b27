import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { batchedOutput } from '../../../server/src/cli/batchedOutput';

describe("serve's batched output", () => {
  test('what one turn writes goes out in one write at its end, in order', async () => {
    const writes: string[] = [];
    const out = batchedOutput((t) => writes.push(t));
    out.write('GET /a 200 0.1ms\n');
    out.write('GET /b 404 0.2ms\n');
    assert.deepEqual(writes, []);
    await nextTurn();
    out.write('GET /c 200 0.1ms\n');
    await nextTurn();
    assert.deepEqual(writes, ['GET /a 200 0.1ms\nGET /b 404 0.2ms\n', 'GET /c 200 0.1ms\n']);
  });

  test('flush writes what waits at once, and nothing is written twice', async () => {
    const writes: string[] = [];
    const out = batchedOutput((t) => writes.push(t));
    out.write('one\n');
    out.flush();
    await nextTurn();
    assert.deepEqual(writes, ['one\n']);
  });

  test('a turn that writes 64 KB sends it then instead of holding more', () => {
    const writes: string[] = [];
    const out = batchedOutput((t) => writes.push(t));
    const line = `${'x'.repeat(1023)}\n`;
    for (let i = 0; i < 64; i++) out.write(line);
    assert.deepEqual(writes.map((w) => w.length), [65_536]);
  });
});
