/**
 * Differential tests: our checker and evaluator against Cloudflare's own engine
 * (wirefilter, as shipped in the firewalker package).
 *
 * For each generated expression (seeded; DIFF_SEED and DIFF_COUNT override the defaults,
 * DIFF_ONLY=3,17 reruns single cases) both engines decide accept / reject; when both
 * accept, both evaluate it on ~5 generated sets of field values. Every disagreement that
 * test/diff/known-differences.ts does not explain is a failure; at most 20 are printed.
 *
 * The comparison is bounded by firewalker's scheme (FIREWALKER_FIELDS and its ten
 * functions) and by what this engine build can evaluate: every field used must have a
 * value (no absent top-level fields), Int values are 32-bit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boundRegexBacktracking } from '../../server/src/regexBudget';
import { loadWirefilter, FIREWALKER_FIELDS, type Wirefilter } from './wirefilter';
import { generateCases, generateFieldSets, type GeneratedCase, type PoolField } from './generate';
import { explain, KNOWN_DIFFERENCES, type Outcome } from './known-differences';
import { compileExpression, prepareFields } from '../../server/src/language/index';
import type { CompiledFilter } from '../../server/src/language/evaluate';
import { httpScheme } from '../../server/src/language/scheme/index';
import { typeToString } from '../../server/src/language/types';

const SEED = envInt('DIFF_SEED', 0x5eed2024);
const COUNT = envInt('DIFF_COUNT', 3000);
const SETS = 5;
const MAX_REPORTED = 20;
const ONLY = (process.env.DIFF_ONLY ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter((s) => s !== '')
  .map(Number);

function envInt(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new Error(`${name} must be an integer, got ${v}`);
  return n;
}

// As every Rulesmith process runs the engine: user regexes run on irregexp where they can.
boundRegexBacktracking();
const loaded = loadWirefilter();

if ('unavailable' in loaded) {
  console.log(`differential tests skipped: ${loaded.unavailable}`);
  test.skip(`differential tests (wirefilter unavailable: ${loaded.unavailable})`, () => {});
} else {
  const wf = loaded;
  test(`differential: ${COUNT} expressions, seed ${SEED}, against wirefilter ${wf.version}`, { timeout: 120_000 }, () => {
    const run = runDifferential(wf);
    wf.close();
    console.log(run.summary);
    if (run.failures.length > 0) {
      const shown = diverse(run.failures).slice(0, MAX_REPORTED).map(formatFailure).join('\n\n');
      assert.fail(
        `${run.failures.length} unexplained difference(s) between our engine and wirefilter` +
          (run.failures.length > MAX_REPORTED ? ` (first ${MAX_REPORTED} shown)` : '') +
          `:\n\n${shown}\n\nReproduce one with DIFF_SEED=${SEED} DIFF_ONLY=<case>.`,
      );
    }
  });
}

// ---------------------------------------------------------------------------------------

interface Failure {
  readonly case: GeneratedCase;
  readonly ours: Outcome;
  readonly theirs: Outcome;
}

/** The fields both engines know with the same type; the others are left out. */
function comparablePool(): { pool: PoolField[]; excluded: string[] } {
  const pool: PoolField[] = [];
  const excluded: string[] = [];
  for (const [name, type] of FIREWALKER_FIELDS) {
    const ours = httpScheme.fields.get(name);
    if (!ours) excluded.push(`${name} (not in our scheme)`);
    else if (typeToString(ours.type) !== type) excluded.push(`${name} (ours ${typeToString(ours.type)}, firewalker ${type})`);
    else pool.push({ name, type });
  }
  return { pool, excluded };
}

/** Checks (and, when it has no error, compiles) an expression with our engine. */
function oursCompile(expr: string, nilNotEqual = false): { outcome: Outcome; filter?: CompiledFilter } {
  const r = compileExpression(expr, { nilNotEqual });
  const err = r.diagnostics.find((d) => d.severity === 'error');
  if (err) return { outcome: { phase: 'parse', accepted: false, message: `${err.code}: ${err.message}`, range: [err.range.start, err.range.end] } };
  return { outcome: { phase: 'parse', accepted: true }, filter: r.filter };
}

function theirsParse(wf: Wirefilter, expr: string): Outcome {
  const r = wf.check(expr);
  return r.ok ? { phase: 'parse', accepted: true } : { phase: 'parse', accepted: false, message: r.message };
}

type Evaluate = (fields: Record<string, unknown>) => { result: boolean | 'error'; message?: string };

function oursEvaluator(filter: CompiledFilter | undefined): Evaluate {
  return (fields) => {
    if (!filter) return { result: 'error', message: 'accepted but not compiled' };
    const prepared = prepareFields(fields, httpScheme);
    if (prepared.errors.length > 0) return { result: 'error', message: `prepareFields: ${prepared.errors.map((e) => e.message).join('; ')}` };
    try {
      return { result: filter.matches(prepared.values) };
    } catch (e) {
      return { result: 'error', message: `threw: ${e instanceof Error ? e.message : String(e)}` };
    }
  };
}

function theirsEvaluate(wf: Wirefilter, expr: string, fields: Record<string, unknown>): { result: boolean | 'error'; message?: string } {
  try {
    return { result: wf.match(expr, fields) };
  } catch (e) {
    return { result: 'error', message: e instanceof Error ? e.message : String(e) };
  }
}

function runDifferential(wf: Wirefilter): { failures: Failure[]; summary: string } {
  const started = process.hrtime.bigint();
  const { pool, excluded } = comparablePool();
  // Where the time goes (ms): generation, our checker/evaluator, wirefilter.
  const spent = { generate: 0, ours: 0, theirs: 0 };
  const timed = <T>(key: keyof typeof spent, f: () => T): T => {
    const t0 = process.hrtime.bigint();
    try {
      return f();
    } finally {
      spent[key] += Number(process.hrtime.bigint() - t0) / 1e6;
    }
  };
  let cases = timed('generate', () => generateCases({ seed: SEED, count: COUNT, pool }));
  if (ONLY.length > 0) cases = cases.filter((c) => ONLY.includes(c.index));

  const failures: Failure[] = [];
  const known = new Map<string, number>();
  const tally = { bothAccept: 0, bothReject: 0, parseMismatch: 0, evals: 0, trueResults: 0, evalMismatch: 0, validRejectedByBoth: 0 };
  const note = (id: string): void => void known.set(id, (known.get(id) ?? 0) + 1);

  for (const c of cases) {
    const compiled = timed('ours', () => oursCompile(c.expr));
    const ours = compiled.outcome;
    const theirs = timed('theirs', () => theirsParse(wf, c.expr));
    if (ours.phase !== 'parse' || theirs.phase !== 'parse') continue;
    if (ours.accepted !== theirs.accepted) {
      tally.parseMismatch++;
      const k = explain(c.expr, ours, theirs);
      if (k) note(k.id);
      else failures.push({ case: c, ours, theirs });
      continue;
    }
    if (!ours.accepted) {
      tally.bothReject++;
      if (c.origin === 'valid') tally.validRejectedByBoth++;
      continue;
    }
    tally.bothAccept++;

    const used = wf.usedFields(c.expr).map((name): PoolField => ({ name, type: wf.fields.get(name) ?? 'Bytes' }));
    const evaluate = oursEvaluator(compiled.filter);
    let nilEvaluate: Evaluate | undefined;
    for (const fields of timed('generate', () => generateFieldSets(c, used, SETS))) {
      tally.evals++;
      const o = timed('ours', () => evaluate(fields));
      const t = timed('theirs', () => theirsEvaluate(wf, c.expr, fields));
      if (t.result === true) tally.trueResults++;
      if (o.result === t.result && o.result !== 'error') continue;
      tally.evalMismatch++;
      nilEvaluate ??= oursEvaluator(oursCompile(c.expr, true).filter);
      const oursOutcome: Outcome = { phase: 'eval', result: o.result, message: o.message, fields, nilNotEqual: nilEvaluate(fields).result };
      const theirsOutcome: Outcome = { phase: 'eval', result: t.result, message: t.message, fields };
      const k = explain(c.expr, oursOutcome, theirsOutcome);
      if (k) note(k.id);
      else failures.push({ case: c, ours: oursOutcome, theirs: theirsOutcome });
    }
  }

  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const knownLines = KNOWN_DIFFERENCES.filter((d) => known.has(d.id)).map((d) => `    ${d.id}: ${known.get(d.id)}`);
  const summary = [
    `differential (seed ${SEED}, ${cases.length} cases, ${(ms / 1000).toFixed(1)} s: generating ${(spent.generate / 1000).toFixed(1)} s, ours ${(spent.ours / 1000).toFixed(1)} s, wirefilter ${(spent.theirs / 1000).toFixed(1)} s):`,
    `  accept/reject agree: ${tally.bothAccept} both accept, ${tally.bothReject} both reject (of which ${tally.validRejectedByBoth} generated as valid)`,
    `  accept/reject differ: ${tally.parseMismatch}`,
    `  evaluations: ${tally.evals} (${tally.trueResults} true in wirefilter), differing: ${tally.evalMismatch}`,
    `  explained by known differences:`,
    ...(knownLines.length > 0 ? knownLines : ['    (none)']),
    `  unexplained: ${failures.length}`,
    `  fields left out of the comparison: ${excluded.length === 0 ? 'none' : excluded.join(', ')}`,
  ].join('\n');
  return { failures, summary };
}

function show(o: Outcome): string {
  if (o.phase === 'parse') return o.accepted ? 'accepted' : `rejected: ${firstLines(o.message ?? '')}`;
  const r = o.result === 'error' ? `error: ${o.message ?? ''}` : String(o.result);
  return o.nilNotEqual !== undefined && o.nilNotEqual !== o.result ? `${r} (with nilNotEqual: ${String(o.nilNotEqual)})` : r;
}

/** Engine reports are "Filter parsing error (l:c):\n<line>\n<carets> message": keep the header and message. */
function firstLines(message: string): string {
  const lines = message.split('\n').filter((l) => l.trim() !== '');
  if (lines.length >= 3 && /^Filter parsing error/.test(lines[0])) return `${lines[0]} ${lines[lines.length - 1].trim()}`;
  return lines.join(' | ');
}

/** What kind of difference a failure is, roughly: to show one of each kind first. */
function kindOf(f: Failure): string {
  const msg = (o: Outcome): string =>
    o.phase === 'parse' ? (o.accepted ? 'accepted' : firstLines(o.message ?? '').replace(/^Filter parsing error \(\d+:\d+\):\s*/, '').replace(/^\^+\s*/, '')) : String(o.result);
  return `${f.ours.phase}|${msg(f.ours).slice(0, 60)}|${msg(f.theirs).slice(0, 60)}`;
}

/** The failures reordered so that the first of each kind comes first. */
function diverse(failures: readonly Failure[]): Failure[] {
  const seen = new Set<string>();
  const first: Failure[] = [];
  const rest: Failure[] = [];
  for (const f of failures) {
    const k = kindOf(f);
    (seen.has(k) ? rest : first).push(f);
    seen.add(k);
  }
  return [...first, ...rest];
}

function formatFailure(f: Failure): string {
  const c = f.case;
  const out = [
    `case ${c.index} [${c.origin}${c.mutation ? `, ${c.mutation.kind}` : ''}] ${f.ours.phase === 'parse' ? 'accept/reject' : 'evaluation'} differs`,
    `  expr:   ${JSON.stringify(c.expr)}`,
    `  ours:   ${show(f.ours)}`,
    `  theirs: ${show(f.theirs)}`,
  ];
  if (f.ours.phase === 'eval') out.push(`  fields: ${JSON.stringify(f.ours.fields)}`);
  return out.join('\n');
}
