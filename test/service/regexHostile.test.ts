// Hostile regexes through `rulesmith serve` (issue 19 §3): a write only checks its
// patterns (parse and size estimate, no program), so 1,000 distinct patterns near the
// engine's size limit — each of which takes seconds and ~20 MB to compile — leave the
// process about as large as 100 small ones. Ratios of the child's resident memory (from
// /proc, so Linux only), no wall-clock thresholds; test/bench/regexHostile.bench.ts has
// the figures.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { demoZoneId } from '../../server/src/service/seed';
import { firstError, spawnService, startService } from './harness';

const ENTRY = `/zones/${demoZoneId('enterprise.example.com')}/rulesets/phases/http_request_firewall_custom/entrypoint`;
const RULES_PER_WRITE = 10;

/** Accepted by the engine, expensive to compile: `a{300000}`-like and `(.*){1,46000}`-like (the boundaries are 327679 and 46812). */
const hostile = (k: number) => (k % 2 === 0 ? `a{${300_000 + k}}` : `(.*){1,${46_000 + (k >> 1)}}`);
const bounded = (k: number) => `bounded-${k}-[a-z]{3}`;

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-regex-hostile-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('1,000 distinct hostile patterns grow serve no more than 100 bounded ones did', { skip: process.platform !== 'linux' && 'reads /proc', timeout: 600_000 }, async () => {
  assert.ok(existsSync('server/out/cli.js'), 'run `npm run build` first');
  const svc = await spawnService(['--db', join(dir, 'hostile.db'), '--seed', 'demo']);
  const token = /demo admin +every zone, read and write +(\S+)/.exec(svc.output())![1]!;
  const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${svc.child.pid}/status`, 'utf8'))![1]) * 1024;
  const write = async (patterns: readonly string[]) => {
    const res = await fetch(`${svc.url}${ENTRY}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rules: patterns.map((p) => ({ action: 'block', expression: `http.user_agent matches "${p}"` })) }),
    });
    assert.equal(res.status, 200, await res.text());
  };
  const writeAll = async (count: number, pattern: (k: number) => string) => {
    for (let w = 0; w < count / RULES_PER_WRITE; w++) await write(Array.from({ length: RULES_PER_WRITE }, (_, i) => pattern(w * RULES_PER_WRITE + i)));
  };
  try {
    await writeAll(100, bounded);
    const afterBounded = rss();
    await writeAll(1_000, hostile);
    const afterHostile = rss();
    // Before the fix each hostile pattern was compiled on write and kept (~20 MB each, 512 kept).
    assert.ok(afterHostile < 1.5 * afterBounded, `RSS ${(afterBounded / 2 ** 20).toFixed(0)} MiB after 100 bounded patterns, ${(afterHostile / 2 ** 20).toFixed(0)} MiB after 1,000 hostile ones`);
    // The last write was stored as sent.
    const got = await fetch(`${svc.url}${ENTRY}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await got.json()) as { result: { rules: { expression: string }[] } };
    assert.equal(body.result.rules[9].expression, `http.user_agent matches "${hostile(999)}"`);
  } finally {
    svc.child.kill('SIGTERM');
  }
});

test('a write is refused at the engine’s boundary, in its words, and accepted just below it', async () => {
  const svc = await startService();
  try {
    const put = (p: string) => svc.call('PUT', ENTRY, { body: { rules: [{ action: 'block', expression: `http.user_agent matches "${p}"` }] } });
    assert.equal((await put('a{327679}')).status, 200);
    const refused = await put('a{327680}');
    assert.equal(refused.status, 400);
    assert.deepEqual(firstError(refused.body), {
      code: 20021,
      message:
        '\'http.user_agent matches "a{327680}"\' is not a valid value for expression because could not parse filter expression: Filter parsing error (1:25):\n' +
        'http.user_agent matches "a{327680}"\n' +
        '                        ^^^^^^^^^^^ Compiled regex exceeds size limit of 10485760 bytes.\n',
      pointer: '/rules/0/expression',
    });
  } finally {
    await svc.close();
  }
});
