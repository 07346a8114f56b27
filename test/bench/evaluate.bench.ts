/**
 * Evaluation speed: our compiled filters vs Cloudflare's engine (wirefilter 0.7.0 as
 * shipped by firewalker) on the same expressions and field values.
 *
 *   node --import tsx test/bench/evaluate.bench.ts
 *
 * For each rule it prints the median time of one evaluation (ns), measured as the median
 * over batches of many evaluations after a warm-up. Field values are prepared once on
 * both sides (our prepareFields, wirefilter's execution context), so only matching is
 * timed. Wirefilter is reached through FFI; an empty FFI call is timed too, and its cost
 * subtracted to estimate the engine's own time.
 */
import { compileExpression, prepareFields } from '../../server/src/language/index';
import { httpScheme } from '../../server/src/language/scheme/index';
import { loadWirefilter } from '../diff/wirefilter';

interface Rule {
  readonly name: string;
  readonly expr: string;
}

const RULES: readonly Rule[] = [
  { name: 'README example', expr: 'http.request.uri.path contains "/admin" and not ip.src in {192.0.2.0/24}' },
  { name: 'regex', expr: 'http.user_agent matches "(?i)(curl|wget|python-requests)/[0-9]+"' },
  { name: 'sets', expr: 'ip.src.country in {"CN" "RU" "KP" "IR"} or http.request.method in {"PUT" "DELETE" "PATCH"} or cf.edge.server_port in {8080 8443 2052..2096}' },
  { name: 'headers any()', expr: 'any(lower(http.request.headers["user-agent"][*])[*] contains "bot") and not ssl' },
  {
    name: 'mixed 6 tests',
    expr: 'http.host eq "example.com" and http.request.method eq "POST" and starts_with(http.request.uri.path, "/api/") and ip.src.asnum ne 13335 and not ip.src in {10.0.0.0/8 172.16.0.0/12} and len(http.user_agent) gt 10',
  },
];

/** One typical request (values within both engines' types; Int fits 32 bits). */
const FIELDS: Record<string, unknown> = {
  'http.host': 'example.com',
  'http.request.method': 'POST',
  'http.request.uri.path': '/api/v1/admin/users',
  'http.user_agent': 'Mozilla/5.0 (X11; Linux x86_64) curl/8.5.0',
  'ip.src': '198.51.100.7',
  'ip.src.country': 'GB',
  'ip.src.asnum': 64500,
  'cf.edge.server_port': 443,
  ssl: true,
  'http.request.headers': { 'user-agent': ['Mozilla/5.0 (X11; Linux x86_64) curl/8.5.0'], accept: ['*/*'], 'x-forwarded-proto': ['https'] },
};

const WARMUP_MS = 150;
const BATCHES = 25;
const BATCH_MS = 8;

/** Median ns per call of `f`: batches sized to ~BATCH_MS each, after a warm-up. */
function measure(f: () => unknown): number {
  let sink = 0;
  const run = (n: number): number => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) if (f()) sink++;
    return Number(process.hrtime.bigint() - t0);
  };
  // Warm up and calibrate the batch size.
  let n = 64;
  const warmEnd = process.hrtime.bigint() + BigInt(WARMUP_MS * 1e6);
  while (process.hrtime.bigint() < warmEnd) {
    const ns = run(n);
    if (ns < BATCH_MS * 1e6 / 2) n *= 2;
  }
  const perCall: number[] = [];
  for (let b = 0; b < BATCHES; b++) perCall.push(run(n) / n);
  perCall.sort((a, c) => a - c);
  if (sink < 0) console.log(sink); // keep the results alive
  return perCall[Math.floor(perCall.length / 2)];
}

function fmt(ns: number): string {
  return ns >= 10_000 ? `${(ns / 1000).toFixed(1)} µs` : `${ns.toFixed(0)} ns`;
}

function main(): void {
  const wf = loadWirefilter();
  const theirs = 'unavailable' in wf ? undefined : wf;
  if (!theirs) console.log(`wirefilter unavailable (${'unavailable' in wf ? wf.unavailable : ''}); timing ours only`);

  const prepared = prepareFields(FIELDS, httpScheme);
  if (prepared.errors.length > 0) throw new Error(`prepareFields: ${prepared.errors.map((e) => e.message).join('; ')}`);

  const ffi = theirs ? measure(() => theirs.noop()) : 0;
  console.log(`node ${process.version}, ${process.platform}-${process.arch}${theirs ? `, wirefilter ${theirs.version} via FFI (empty FFI call: ${fmt(ffi)})` : ''}`);
  console.log('median time per evaluation (median of ' + BATCHES + ' batches):\n');

  const rows: string[][] = [['rule', 'ours', 'wirefilter', 'wirefilter − FFI', 'ours / wirefilter', 'ours / (wirefilter − FFI)']];
  for (const rule of RULES) {
    const compiled = compileExpression(rule.expr);
    if (!compiled.filter) throw new Error(`${rule.name}: ${compiled.diagnostics.map((d) => d.message).join('; ')}`);
    const filter = compiled.filter;
    const oursResult = filter.matches(prepared.values);
    const ours = measure(() => filter.matches(prepared.values));
    if (!theirs) {
      rows.push([rule.name, fmt(ours), '—', '—', '—', '—']);
      continue;
    }
    const used: Record<string, unknown> = {};
    for (const name of theirs.usedFields(rule.expr)) used[name] = FIELDS[name];
    const wfFilter = theirs.compile(rule.expr);
    const ctx = theirs.context(used, { lists: rule.expr.includes('$') });
    try {
      const theirsResult = wfFilter.matchContext(ctx);
      if (theirsResult !== oursResult) console.log(`  note: ${rule.name}: ours ${oursResult}, wirefilter ${theirsResult}`);
      const t = measure(() => wfFilter.matchContext(ctx));
      const engine = Math.max(1, t - ffi);
      rows.push([rule.name, fmt(ours), fmt(t), fmt(engine), (ours / t).toFixed(2), (ours / engine).toFixed(2)]);
    } finally {
      ctx.free();
    }
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
  if (theirs) {
    console.log('\n(wirefilter − FFI) subtracts the median empty FFI call; the call itself is made with');
    console.log('preallocated libffi argument buffers (test/diff/wirefilter.ts), so it is mostly libffi + N-API cost.');
    theirs.close();
  }
}

main();
