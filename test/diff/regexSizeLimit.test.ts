/**
 * The size limit's boundaries (regexSizeBoundaries.ts) asked of the engine itself: each
 * pattern at N is accepted and at N + 1 refused with the engine's message. Slow-ish (the
 * engine compiles programs of up to 10 MiB, about half a second each).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadWirefilter } from './wirefilter';
import { SIZE_BOUNDARIES } from './regexSizeBoundaries';

const loaded = loadWirefilter();

if ('unavailable' in loaded) {
  test.skip(`regex size boundaries against the engine (wirefilter unavailable: ${loaded.unavailable})`, () => {});
} else {
  const wf = loaded;
  // The expression's string is the regex as written (wirefilter 0.7 passes `\` through).
  const parse = (pattern: string) => wf.parse(`http.user_agent matches "${pattern}"`);
  test('the engine accepts N and refuses N + 1 for each boundary', { timeout: 300_000 }, () => {
    for (const b of SIZE_BOUNDARIES) {
      const at = (n: number) => b.pattern.replaceAll('N', String(n));
      assert.deepEqual(parse(at(b.engine)), { ok: true }, at(b.engine));
      const over = parse(at(b.engine + 1));
      assert.equal(over.ok, false, at(b.engine + 1));
      if (!over.ok) assert.match(over.message, /Compiled regex exceeds size limit of 10485760 bytes\.\n$/, at(b.engine + 1));
    }
    wf.close();
  });
}
