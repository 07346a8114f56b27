/**
 * The OWASP-based ruleset (CRS 3.3.4 converted) against ModSecurity running CRS 3.3.4:
 * per-request time at paranoia levels 1–4 over the CRS 3.3.4 regression corpus, side by
 * side in one run, with the verdicts of both.
 *
 *   node --import tsx test/bench/crs.bench.ts
 *   RULESMITH_BENCH_ROUNDS=9 RULESMITH_BENCH_THRESHOLD=5 node --import tsx test/bench/crs.bench.ts
 *   RULESMITH_BENCH_TRACE=acting node --import tsx test/bench/crs.bench.ts   (as the WAF proxy evaluates: no entries for idle rules)
 *   RULESMITH_BENCH_EVICT_MB=16 node --import tsx test/bench/crs.bench.ts   (caches evicted before each request, both sides)
 *
 * The corpus: every stage of every enabled test in test/fixtures/crs-3.3.4-regression-tests
 * (or $CRS_TESTS), read by the project's ftw parser (requests/ftw.ts) into sample requests.
 *
 * Rulesmith: a zone whose managed phase deploys the OWASP-based ruleset with an `execute`
 * rule set to PL N (`setParanoiaLevel`) and the anomaly threshold T (`setScoreThreshold`),
 * compiled once per level by `compileZone`. Two figures per level: the engine evaluating
 * prepared field values ("eval only"), and a request going from the sample request to field
 * values (`requestValues`: URL, arguments, cookies, multipart/JSON/XML bodies) and then
 * through the engine ("request+eval") — the latter is what ModSecurity's figure covers too.
 * The core is timed as it ships: bundled by esbuild with scripts/build.mjs's options (see
 * modsec/rulesmith-core.ts for why not through tsx); RULESMITH_BENCH_TSX=1 times it under tsx.
 *
 * ModSecurity: libmodsecurity3 (Debian `libmodsecurity3` + `libmodsecurity-dev`) through
 * test/bench/modsec/harness.c, compiled with `cc -O2 … -lmodsecurity` into
 * ~/.cache/rulesmith-bench/ when the headers are installed. Its config, per level: the
 * engine essentials of modsecurity.conf-recommended (rule engine on, request body access
 * and limits, the JSON/XML body-processor rules 200000/200001 — CRS reads JSON and XML
 * arguments through them; not the non-CRS deny rules 200002/200003, which our converter
 * has no counterpart for), audit and debug logs off, Debian's crs-setup.conf, the paranoia
 * level and threshold as the 900000/900110 SecActions of crs-setup.conf.example set them,
 * then every REQUEST-9xx-*.conf of /usr/share/modsecurity-crs/rules (the converter's
 * input). Each request is a full transaction (connection, URI, headers, body, with an
 * intervention check after each step). Timed rounds run without a log callback; a first,
 * untimed round with one collects the ids of the rules that matched.
 *
 * Both sides: one untimed round (verdicts, warm-up), then R timed rounds each (default 5,
 * RULESMITH_BENCH_ROUNDS), interleaved — a round of ours, then one of ModSecurity's in the
 * resident harness — so that both share whatever else the machine is doing. Each request
 * is timed on its own; the figure is the mean over the corpus of each request's median over
 * the rounds (robust to bursts of load on a shared machine). The threshold defaults to 5,
 * CRS's own default (one critical rule blocks), which is what the regression tests assume;
 * the hosted ruleset's default is 40.
 *
 * Verdicts: "agree" counts the requests that both block or both pass. "same rules" counts
 * the requests where the set of CRS rule ids that scored is the same on both sides
 * (ModSecurity's logged ids without 949110). The disagreements of each level are written
 * to ~/.cache/rulesmith-bench/crs-disagreements-plN.json for whoever works on the converter.
 * At PL4 (the level the suite is run at) the tests' own `log_contains` / `no_log_contains`
 * of a rule id say which side is right. The differences are libmodsecurity3 traits where
 * ModSecurity 2 (which the CRS 3.3.x tests were written against, and our request fields and
 * converter follow) does otherwise: v3 fills REQUEST_BODY for every body processor, where v2
 * leaves it empty with the JSON, XML and multipart processors — hence 920272/920273, 921110
 * and REQUEST_BODY-targeting 944xxx rules scoring on those bodies only in libmodsecurity3;
 * v3's rule parser keeps `\\` in operator arguments where Apache's config reader makes it
 * `\` (920460, 932200, 941330, 942440); v3 compiles regexes with PCRE_MULTILINE (932150).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FieldValues } from '../../server/src/language/evaluate';
import type { ParanoiaLevel } from '../../server/src/managed/preview';
import type { ManagedCatalog, ManagedRule } from '../../server/src/rulesets/catalog';
import type { SampleRequest } from '../../server/src/requests/types';
import type { CompiledZone } from '../../server/src/rulesets/engine';
import type { Rule } from '../../server/src/rulesets/model';
import { yamlFiles } from '../../server/src/corpusFiles';
import { boundRegexBacktracking } from '../../server/src/regexBudget';
import { median, row } from './measure';
import { corpusBytes, harness, Harness, modsecConfig, type Verdict } from './modsec/modsec';
import { BENCH_CACHE, type Core, loadCore } from './modsec/shippedCore';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '../..');
const ROUNDS = Math.max(1, Number(process.env.RULESMITH_BENCH_ROUNDS ?? 5) | 0);
const THRESHOLD = Math.max(1, Number(process.env.RULESMITH_BENCH_THRESHOLD ?? 5) | 0);
/** RULESMITH_BENCH_TRACE=acting: evaluate as the WAF proxy does, without trace entries for the rules that did not act (RequestHooks.omitIdleRules). */
const HOOKS = process.env.RULESMITH_BENCH_TRACE === 'acting' ? { omitIdleRules: true } : undefined;
const TESTS_DIR = process.env.CRS_TESTS ?? join(repo, 'test/fixtures/crs-3.3.4-regression-tests');
const CRS_RULES = process.env.CRS_RULES ?? '/usr/share/modsecurity-crs/rules';

// The code under test, as it ships (modsec/shippedCore.ts).
let core: Core;

// --- The corpus ---------------------------------------------------------------------------

interface Entry {
  readonly name: string;
  readonly request: SampleRequest;
  readonly values: FieldValues;
  /** The test's own expectation, when it names a rule: `log_contains` (true) / `no_log_contains` (false) that id. */
  readonly expect?: { readonly id: string; readonly logged: boolean };
}

function corpus(): { entries: Entry[]; skipped: number; withProblems: number } {
  const entries: Entry[] = [];
  let skipped = 0;
  let withProblems = 0;
  for (const file of yamlFiles(TESTS_DIR)) {
    const parsed = core.parseFtwFile(readFileSync(file, 'utf8'));
    for (const t of parsed.tests) {
      if (t.enabled === false) {
        skipped += t.stages.length;
        continue;
      }
      t.stages.forEach((s, i) => {
        const v = core.requestValues(s.request);
        if (v.problems.length > 0) withProblems++;
        const yes = s.output.logContains !== undefined ? core.ftwRuleId(s.output.logContains) : undefined;
        const no = s.output.noLogContains !== undefined ? core.ftwRuleId(s.output.noLogContains) : undefined;
        const expect = yes !== undefined ? { id: yes, logged: true } : no !== undefined ? { id: no, logged: false } : undefined;
        entries.push({ name: t.stages.length > 1 ? `${t.title} stage ${i + 1}` : t.title, request: s.request, values: v.values, expect });
      });
    }
    // Stages that did not parse into a request are not in `tests`; count them as skipped.
    skipped += parsed.problems.length;
  }
  return { entries, skipped, withProblems };
}

// --- Rulesmith ------------------------------------------------------------------------------

/**
 * The OWASP-based ruleset: the default catalog's, when it holds the converted CRS rules;
 * else (while the catalog still has the six stand-in rules) the build's generated rules.
 */
function owaspCatalog(): { catalog: ManagedCatalog; source: string } {
  const rs = core.defaultCatalog.rulesets.find((r) => r.id === core.OWASP_RULESET_ID);
  const rules = rs ? core.rulesetVersion(rs)!.rules : [];
  if (rules.length > 50) return { catalog: core.defaultCatalog, source: 'defaultCatalog' };
  const file = join(repo, 'server/src/managed/generated/owasp-rules.json');
  const generated = JSON.parse(readFileSync(file, 'utf8')) as ManagedRule[];
  return { catalog: { rulesets: [core.owaspRuleset(generated)] }, source: relative(repo, file) };
}

function zoneAt(catalog: ManagedCatalog, level: ParanoiaLevel): CompiledZone {
  let execute: Rule = { ref: 'deploy-owasp', expression: 'true', action: 'execute', action_parameters: { id: core.OWASP_RULESET_ID } };
  execute = core.setScoreThreshold(core.setParanoiaLevel(execute, level), THRESHOLD, undefined, { catalog });
  const z = core.compileZone({ catalog, entryPoints: { http_request_firewall_managed: { id: 'e'.repeat(32), phase: 'http_request_firewall_managed', rules: [execute] } } });
  const errors = z.problems.filter((p) => p.severity === 'error');
  if (errors.length > 0) console.log(`  (PL${level}: ${errors.length} rules do not compile, e.g. ${errors[0].ref}: ${errors[0].message})`);
  return z;
}


function ourVerdict(z: CompiledZone, values: FieldValues): Verdict {
  const ev = z.evaluate(values);
  const ids = ev.trace.filter((t) => t.outcome === 'scored' && t.ref !== undefined).map((t) => t.ref!);
  return { blocked: ev.decision.action !== 'allow-through', ids: [...new Set(ids)].sort() };
}

/**
 * RULESMITH_BENCH_EVICT_MB=N: N MB written before each timed request, on both sides (the
 * harness reads the same variable), so that a request finds the caches as on a lightly
 * loaded server, where the app and other processes run between requests.
 */
const EVICT = Math.max(0, Number(process.env.RULESMITH_BENCH_EVICT_MB ?? 0) | 0) << 20;
const evictBuffer = new Uint8Array(EVICT);
function evict(): void {
  for (let k = 0; k < EVICT; k += 64) evictBuffer[k]!++;
}

/** One timed round: each request's time, in ns. */
function round(n: number, one: (i: number) => void): number[] {
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    evict();
    const t = process.hrtime.bigint();
    one(i);
    out[i] = Number(process.hrtime.bigint() - t);
  }
  return out;
}

/** Each request's median time over the rounds, in ns. */
function medians(rounds: readonly number[][]): number[] {
  return rounds[0].map((_, i) => median(rounds.map((r) => r[i])));
}

/** p50 / p99 / max of per-request times (ns), as text in µs. */
function tail(ns: readonly number[]): string {
  const s = [...ns].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  const us = (x: number) => `${(x / 1000).toFixed(0)}`;
  return `p50 ${us(at(0.5))} / p99 ${us(at(0.99))} / max ${us(s[s.length - 1])} µs`;
}

/** The mean over requests of each request's median time over the rounds, in ns. */
function perRequest(rounds: readonly number[][]): number {
  const n = rounds[0].length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += median(rounds.map((r) => r[i]));
  return sum / n;
}

// --- Main ------------------------------------------------------------------------------------

async function main(): Promise<void> {
  // As every Rulesmith process runs the engine (regexBudget.ts); nothing here reaches the budget.
  boundRegexBacktracking();
  const loaded = await loadCore();
  core = loaded.core;
  if (!existsSync(TESTS_DIR)) {
    console.log(`no CRS regression tests at ${TESTS_DIR} (set CRS_TESTS): nothing to measure`);
    return;
  }
  const { entries, skipped, withProblems } = corpus();
  const n = entries.length;
  const { catalog, source } = owaspCatalog();
  const ruleCount = core.rulesetVersion(catalog.rulesets.find((r) => r.id === core.OWASP_RULESET_ID)!)!.rules.length;
  const h = harness(BENCH_CACHE, CRS_RULES);
  let corpusFile: string | undefined;
  if (h.bin) {
    corpusFile = join(BENCH_CACHE, 'crs-corpus.bin');
    writeFileSync(corpusFile, corpusBytes(entries.map((e) => e.request), core.DEFAULT_CLIENT_IP));
  }
  console.log(
    `node ${process.version}, ${process.platform}-${process.arch}; ${n} requests from the CRS 3.3.4 regression tests` +
      ` (${skipped} disabled or unreadable stages left out; ${withProblems} read with problems, kept); OWASP-based ruleset: ${ruleCount} rules from ${source};` +
      ` anomaly threshold ${THRESHOLD}; ${loaded.how}; ${ROUNDS} timed rounds per side, interleaved, after an untimed one` +
      (EVICT ? `; caches evicted before each timed request (${EVICT >> 20} MB written, both sides)` : ''),
  );
  if (!h.bin) console.log(`ModSecurity: not measured — ${h.why}`);

  const widths = [3, 8, 14, 14, 12, 14, 11, 15, 15];
  console.log(row(['PL', 'requests', 'Rulesmith', 'Rulesmith', 'ModSecurity', 'ratio', 'ratio', 'verdicts agree', 'same rules'], widths));
  console.log(row(['', '', 'request+eval', 'eval only', '', 'request+eval', 'eval only', '(disagree)', '(differ)'], widths));
  const notes: string[] = [];
  for (const level of core.PARANOIA_LEVELS) {
    const z = zoneAt(catalog, level);
    let harnessRun: Harness | undefined;
    let ms: { loadMs: number; verdicts: Verdict[]; nsPerRequest: number } | undefined;
    if (h.bin && corpusFile) {
      const conf = join(BENCH_CACHE, `crs-pl${level}.conf`);
      writeFileSync(conf, modsecConfig(CRS_RULES, level, THRESHOLD));
      harnessRun = new Harness(h.bin, conf, corpusFile);
    }
    // Untimed: verdicts, and a warm-up round of each kind (ModSecurity's is its verdict round).
    const ours = entries.map((e) => ourVerdict(z, e.values));
    let sink = 0;
    const evalOne = (i: number) => void (sink += z.evaluate(entries[i].values, undefined, HOOKS).trace.length);
    const fullOne = (i: number) => void (sink += z.evaluate(core.requestValues(entries[i].request).values, undefined, HOOKS).trace.length);
    round(n, evalOne);
    round(n, fullOne);
    const theirs = harnessRun ? await harnessRun.verdicts(n) : undefined;
    // Timed, interleaved so that both sides share whatever else the machine is doing.
    const evalRounds: number[][] = [];
    const fullRounds: number[][] = [];
    const modsecRounds: number[][] = [];
    for (let r = 0; r < ROUNDS; r++) {
      evalRounds.push(round(n, evalOne));
      fullRounds.push(round(n, fullOne));
      if (harnessRun) modsecRounds.push(await harnessRun.round());
    }
    harnessRun?.end();
    if (sink < 0) console.log(sink);
    const evalNs = perRequest(evalRounds);
    const fullNs = perRequest(fullRounds);
    if (theirs) ms = { ...theirs, nsPerRequest: perRequest(modsecRounds) };
    let agree = '-';
    let same = '-';
    let ratio = '-';
    let evalRatio = '-';
    if (ms) {
      const disagreements: object[] = [];
      const onlyOurs = new Map<string, number>();
      const onlyTheirs = new Map<string, number>();
      const count = (m: Map<string, number>, ids: readonly string[]) => ids.forEach((id) => m.set(id, (m.get(id) ?? 0) + 1));
      let verdictDiff = 0;
      let ruleDiff = 0;
      for (let i = 0; i < n; i++) {
        const a = ours[i];
        const b = ms.verdicts[i] ?? { blocked: false, ids: [] };
        const vd = a.blocked !== b.blocked;
        const rd = a.ids.join() !== b.ids.join();
        if (vd) verdictDiff++;
        if (rd) ruleDiff++;
        if (vd || rd) {
          const onlyRulesmith = a.ids.filter((x) => !b.ids.includes(x));
          const onlyModSecurity = b.ids.filter((x) => !a.ids.includes(x));
          count(onlyOurs, onlyRulesmith);
          count(onlyTheirs, onlyModSecurity);
          disagreements.push({ name: entries[i].name, verdict: vd ? { rulesmith: a.blocked, modsecurity: b.blocked } : undefined, onlyRulesmith, onlyModSecurity });
        }
      }
      if (level === 4) {
        // The suite is run at PL4 (every rule active); 949110 counts as logged when the request is blocked.
        const met = (v: Verdict, e: Entry) => e.expect!.logged === (v.ids.includes(e.expect!.id) || (e.expect!.id === '949110' && v.blocked));
        let tests = 0;
        let oursMet = 0;
        let theirsMet = 0;
        let bothMissed = 0;
        const missed: { test: string; expects: string; missedBy: string }[] = [];
        entries.forEach((e, i) => {
          if (!e.expect) return;
          tests++;
          const a = met(ours[i], e);
          const b = met(ms!.verdicts[i] ?? { blocked: false, ids: [] }, e);
          if (a) oursMet++;
          if (b) theirsMet++;
          if (!a && !b) bothMissed++;
          if (!a || !b) missed.push({ test: e.name, expects: `${e.expect.logged ? '' : 'no '}${e.expect.id}`, missedBy: !a && !b ? 'both' : !a ? 'Rulesmith' : 'ModSecurity' });
        });
        writeFileSync(join(BENCH_CACHE, 'crs-expectations-missed-pl4.json'), JSON.stringify(missed, null, 1));
        notes.push(
          `  PL4, the regression tests' own expectations (log_contains / no_log_contains a rule id, ${tests} requests): met by Rulesmith ${oursMet}` +
            ` (${((oursMet / tests) * 100).toFixed(1)}%), by ModSecurity ${theirsMet} (${((theirsMet / tests) * 100).toFixed(1)}%), by neither ${bothMissed}`,
        );
      }
      writeFileSync(join(BENCH_CACHE, `crs-disagreements-pl${level}.json`), JSON.stringify(disagreements, null, 1));
      agree = `${(((n - verdictDiff) / n) * 100).toFixed(1)}% (${verdictDiff})`;
      same = `${(((n - ruleDiff) / n) * 100).toFixed(1)}% (${ruleDiff})`;
      ratio = `${(ms.nsPerRequest / fullNs).toFixed(1)}×`;
      evalRatio = `${(ms.nsPerRequest / evalNs).toFixed(1)}×`;
      // The tail, side by side, and the requests on which ModSecurity is faster.
      const ourTimes = medians(fullRounds);
      const theirTimes = medians(modsecRounds);
      const slower = ourTimes.map((t, i) => ({ i, ratio: t / theirTimes[i] })).filter((x) => x.ratio > 1).sort((a, b) => b.ratio - a.ratio);
      notes.push(
        `  PL${level} per request (request+eval): Rulesmith ${tail(ourTimes)}; ModSecurity ${tail(theirTimes)}; Rulesmith slower on ${slower.length} of ${n}` +
          (slower.length > 0 ? ` (most: ${slower.slice(0, 5).map((x) => `${entries[x.i].name} ${x.ratio.toFixed(1)}×`).join(', ')})` : ''),
      );
      const top = (m: Map<string, number>) => [...m].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0])).slice(0, 8).map(([id, c]) => `${id}×${c}`).join(' ') || 'none';
      notes.push(`  PL${level} rules scored only by ModSecurity: ${top(onlyTheirs)}; only by Rulesmith: ${top(onlyOurs)}`);
    }
    const line = row(
      [String(level), String(n), `${(fullNs / 1000).toFixed(0)} µs`, `${(evalNs / 1000).toFixed(0)} µs`, ms ? `${(ms.nsPerRequest / 1000).toFixed(0)} µs` : '-', ratio, evalRatio, agree, same],
      widths,
    );
    console.log(line);
  }
  for (const note of notes) console.log(note);
  console.log(
    '  Times: per request, the median over the rounds, averaged over the corpus. ratio = ModSecurity ÷ Rulesmith (above 1: Rulesmith faster);' +
      ' ModSecurity\'s time covers a whole transaction (parsing the request included), like "request+eval". "verdicts agree": both block or both pass;' +
      ` "same rules": the same CRS ids scored.${h.bin ? ` Disagreements: ${BENCH_CACHE}/crs-disagreements-plN.json; tests missed at PL4: crs-expectations-missed-pl4.json there.` : ''}`,
  );
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
