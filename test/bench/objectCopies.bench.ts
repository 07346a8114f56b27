/**
 * Four ways to copy an object and add one property, each made per iteration as the proxy
 * makes a request's verdict from its parts: `{ ...base, kind }` (the spread first),
 * `{ kind, ...base }`, `Object.assign({}, base, { kind })`, and the properties written out.
 * Each runs for RULESMITH_BENCH_SECONDS (default 3) in a child node with --trace-gc
 * --trace-gc-nvp; printed: the objects made, and per scavenge (median) the bytes that
 * survived it, the bytes it promoted to the old generation, and its pause.
 *
 *   node --import tsx test/bench/objectCopies.bench.ts
 *
 * Why: on Node 20 the spread-first form keeps what its objects point to alive through the
 * young generation's collections until a full one, and is slower to build; the proxy's
 * per-request code does not use it (docs/proxy.md, "No spread-first objects per request",
 * and the ESLint rule in eslint.config.mjs). Run this on a newer node to see whether that
 * still holds.
 */
import { spawnSync } from 'node:child_process';
import { collections } from './gcTrace';
import { median, row } from './measure';

const SECONDS = Number(process.env.RULESMITH_BENCH_SECONDS ?? 3);
if (!(SECONDS > 0 && SECONDS <= 60)) throw new Error(`RULESMITH_BENCH_SECONDS: '${process.env.RULESMITH_BENCH_SECONDS}' is not a number of seconds from 1 to 60`);

const FORMS: Readonly<Record<string, string>> = {
  '{ ...base, kind }': `({ ...base, kind: 'forward' })`,
  '{ kind, ...base }': `({ kind: 'forward', ...base })`,
  'Object.assign': `Object.assign({}, base, { kind: 'forward' })`,
  'written out': `({ route: base.route, rayId: base.rayId, time: base.time, edge: base.edge, visitor: base.visitor, evaluation: base.evaluation, kind: 'forward' })`,
};

/** A request's parts (new each time, as a request's are), the copy, and a use of it so it is not optimized away. */
const child = (form: string) => `
let made = 0, sink = 0;
function make(i) {
  const edge = { ip: 'x' + i, country: 'T1', list: [i, i + 1] };
  const base = { route: 1, rayId: 'r' + i, time: i, edge, visitor: { ip: 'y', ua: 'z' + i }, evaluation: { d: i } };
  return ${form};
}
const end = Date.now() + ${SECONDS * 1000};
(function loop() {
  for (let k = 0; k < 200; k++) sink += make(made++).time & 1;
  if (Date.now() < end) setImmediate(loop);
  else console.log('made ' + made + ' ' + sink);
})();`;

const kb = (b: number) => `${Math.round(b / 1024)} KB`;
console.log(`node ${process.version}: each form made for ${SECONDS} s in its own process; per scavenge, medians`);
const widths = [20, 14, 12, 12, 10];
console.log(row(['form', 'objects made', 'survived', 'promoted', 'pause'], widths));
for (const [name, form] of Object.entries(FORMS)) {
  // One line per scavenge, ~1 KB each, a few hundred a second.
  const r = spawnSync(process.execPath, ['--trace-gc', '--trace-gc-nvp', '-e', child(form)], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.error || r.status !== 0) throw new Error(`${name}: the child failed: ${r.error?.message ?? r.stderr}`);
  const made = /^made (\d+)/m.exec(r.stdout)?.[1] ?? '?';
  const scavenges = (collections(r.stdout)[0]?.[1] ?? []).filter((c) => c.kind === 's');
  const med = (f: (c: (typeof scavenges)[number]) => number) => (scavenges.length ? median(scavenges.map(f)) : NaN);
  console.log(row([name, Number(made).toLocaleString('en-US'), kb(med((c) => c.survived)), kb(med((c) => c.promoted)), `${med((c) => c.pause).toFixed(1)} ms`], widths));
}
