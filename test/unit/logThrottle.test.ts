// The bound on log lines that can repeat at will (logThrottle.ts: the proxy's floods, dropped event batches): the first
// `burst` of a window logged whole, the rest counted by key and summed up in one line when
// the window ends (by its timer) or the proxy closes; a window opens with the first line
// after a quiet one.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LogThrottle } from '../../server/src/logThrottle';

function throttle(burst: number, windowMs: number, now?: () => number) {
  const lines: string[] = [];
  const t = new LogThrottle((l) => lines.push(l), { burst, windowMs, summary: (n, s) => `${n} more in the last ${s} s`, ...(now ? { now } : {}) });
  return { t, lines };
}

describe('LogThrottle', () => {
  test('logs the first `burst` lines of a window whole and counts the rest, by key', () => {
    let clock = 1_000;
    const { t, lines } = throttle(3, 10_000, () => clock);
    for (let i = 0; i < 10; i++) t.line(`line ${i}`, i % 3 === 0 ? '400' : '417');
    assert.deepEqual(lines, ['line 0', 'line 1', 'line 2']);
    clock += 2_500;
    t.close();
    assert.deepEqual(lines.slice(3), ['7 more in the last 3 s (400: 3, 417: 4)']);
    // Nothing left to say: a second close writes nothing.
    t.close();
    assert.equal(lines.length, 4);
  });

  test('a new window opens with the first line after the last one ended, and says what the last one left out first', () => {
    let clock = 0;
    const { t, lines } = throttle(1, 10_000, () => clock);
    t.line('a');
    t.line('b');
    t.line('c');
    clock = 12_000;
    t.line('d');
    assert.deepEqual(lines, ['a', '2 more in the last 12 s', 'd']);
    // d's window lasts until 22 s: e and f are counted; g, at its end, opens the next.
    clock = 15_000;
    t.line('e');
    clock = 21_999;
    t.line('f');
    assert.equal(lines.length, 3);
    clock = 22_000;
    t.line('g');
    assert.deepEqual(lines.slice(3), ['2 more in the last 10 s', 'g']);
    t.close();
    assert.equal(lines.length, 5);
  });

  test('a lone line is logged at once, and nothing more', () => {
    const { t, lines } = throttle(10, 10_000);
    t.line('only');
    t.close();
    assert.deepEqual(lines, ['only']);
  });

  test('at most 8 keys apart; the others are counted as other', () => {
    let clock = 0;
    const { t, lines } = throttle(0, 10_000, () => clock);
    for (let k = 0; k < 10; k++) t.line('x', `k${k}`);
    clock = 1;
    t.close();
    assert.deepEqual(lines, ['10 more in the last 1 s (k0: 1, k1: 1, k2: 1, k3: 1, k4: 1, k5: 1, k6: 1, k7: 1, other: 2)']);
  });

  test("the window's timer writes the summary when the flood stops", async () => {
    const { t, lines } = throttle(1, 50);
    t.line('first', '400');
    t.line('second', '400');
    t.line('third', '505');
    assert.deepEqual(lines, ['first']);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(lines, ['first', '2 more in the last 1 s (400: 1, 505: 1)']);
    t.close();
    assert.equal(lines.length, 2);
  });
});
