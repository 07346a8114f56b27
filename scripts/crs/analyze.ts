// CRS 3.3.4 analysis and coverage report: the first step of the OWASP-based managed ruleset
// converter (issue 5). Build-time only.
//
// Usage (from the repository root):
//   node --import tsx scripts/crs/analyze.ts [--crs DIR] [--out FILE] [--json]
//     --crs DIR   the CRS rules folder (default: $CRS_RULES_DIR, else
//                 /usr/share/modsecurity-crs/rules from Debian's `modsecurity-crs` 3.3.4;
//                 `node scripts/crs/ensure-crs.mjs` installs it when missing and run as root)
//     --out FILE  write the Markdown report to FILE (folders are created) instead of stdout.
//                 The build should write it next to its other generated output, in a
//                 git-ignored folder (e.g. server/out/crs-coverage.md); by default the report
//                 is printed, so running the analysis leaves no file behind.
//     --json      print the analysis as JSON (rules without their AST) instead of Markdown.
// Exit status: 0 when every file parsed without problems, 1 when some parse problem was
// found (they are listed in the report), 2 when the rules folder is missing.
//
// What it does: parses every REQUEST-9xx-*.conf file (seclang.ts) and classifies each
// logical rule (a chain is one rule):
//   - detection: carries a `paranoia-level/N` tag and a severity (the definition used for the
//     counts in CRS's own documentation of the 3.3 anomaly scoring); its anomaly increment
//     is the severity's (CRITICAL 5, ERROR 4, WARNING 3, NOTICE 2);
//   - paranoia-skip: `SecRule TX:EXECUTING_PARANOIA_LEVEL "@lt N" …skipAfter:END-…`; the
//     rules after it (up to the next one) form the file's PL N section;
//   - blocking-evaluation: 949110; score-sum: setvar-only rules adding into tx.anomaly_score
//     (949060–949063); init: setvar-only rules of 901 (defaults); collector: setvar-only
//     rules elsewhere, whose TX state later detection rules read (921170, 922140); exclusion: rules whose ctl
//     actions remove rules or targets (903.9xxx application exclusions, 905); skip: other
//     skipAfter/skip rules; enforcement: other disruptive (deny/drop) rules (901001, 910,
//     912, 949100); other: the rest.
// Then it lists every SecLang feature each rule uses (directives, variables, selectors,
// operators, transformations, actions, macros, regex constructs that JavaScript lacks) with
// the rules using it. The converter will pass the set of features it supports and the set
// of converted rule ids to `renderCoverage` so the same report shows what is not converted.

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseSecLang, rulesOf, type ParsedFile, type Problem, type Rule, type Severity } from './seclang';

export const DEFAULT_CRS_DIR = '/usr/share/modsecurity-crs/rules';
export const ANOMALY_INCREMENT: Partial<Record<Severity, number>> = { CRITICAL: 5, ERROR: 4, WARNING: 3, NOTICE: 2 };

export type RuleKind =
  | 'detection'
  | 'paranoia-skip'
  | 'blocking-evaluation'
  | 'score-sum'
  | 'init'
  | 'collector'
  | 'exclusion'
  | 'skip'
  | 'enforcement'
  | 'other';

export interface RuleInfo {
  id: number | null;
  file: string;
  line: number;
  kind: RuleKind;
  phase: number | null;
  /** From the `paranoia-level/N` tag. */
  paranoiaTag: number | null;
  /** From the file's `TX:EXECUTING_PARANOIA_LEVEL "@lt N"` skip rules (null: before any). */
  paranoiaSection: number | null;
  /** The tag's level, else the section's. */
  paranoiaLevel: number | null;
  severity: Severity | null;
  /** Severity's anomaly score (null when the severity has none or is missing). */
  anomalyIncrement: number | null;
  /** Levels N of the `tx.anomaly_score_plN` counters its setvars add to. */
  scoresInto: number[];
  msg: string | null;
  tags: string[];
  /** Number of links (1 = not chained). */
  chainLength: number;
  features: string[];
  rule: Rule;
}

export interface FileInfo {
  file: string;
  parsed: ParsedFile;
  rules: RuleInfo[];
}

export interface Inconsistency {
  id: number | null;
  file: string;
  line: number;
  message: string;
}

export interface Analysis {
  dir: string;
  files: FileInfo[];
  problems: Problem[];
  inconsistencies: Inconsistency[];
  /** feature -> rule ids (a rule without id is listed as file:line). */
  features: Map<string, string[]>;
}

/** The request-phase rule files of a CRS rules folder, sorted. */
export function requestRuleFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /^REQUEST-9\d\d.*\.conf$/.test(f))
    .sort();
}

// ---------------------------------------------------------------------------------------
// Regex features that do not carry over to JavaScript as-is

export function regexFeatures(pattern: string): string[] {
  const out: string[] = [];
  let p = pattern;
  let flags = '';
  const lead = /^\(\?([a-zA-Z]+)\)/.exec(p);
  if (lead) {
    out.push(`regex: leading (?${lead[1]})`);
    p = p.slice(lead[0].length);
    if (lead[1].includes('i')) flags += 'i';
    if (lead[1].includes('s')) flags += 's';
    if (lead[1].includes('m')) flags += 'm';
  }
  if (/\(\?[a-zA-Z]*-?[a-zA-Z]*:/.test(p)) out.push('regex: scoped flag group (?i:…)');
  if (/\(\?[a-zA-Z]+\)/.test(p)) out.push('regex: inline flags not at the start');
  if (/\(\?<[=!]/.test(p)) out.push('regex: lookbehind');
  if (/\(\?[=!]/.test(p)) out.push('regex: lookahead');
  if (/\(\?>/.test(p)) out.push('regex: atomic group (?>…)');
  if (/(?:[*+?}])\+/.test(p.replace(/\\./g, ''))) out.push('regex: possessive quantifier');
  if (/\\x\{/.test(p)) out.push('regex: \\x{hh} escape');
  if (/\\[1-9]/.test(p.replace(/\\\\/g, ''))) out.push('regex: back-reference');
  if (/\\[AZzGQE]/.test(p.replace(/\\\\/g, ''))) out.push('regex: PCRE-only escape (\\A \\Z \\z \\G \\Q)');
  if (/\$/.test(p.replace(/\\./g, '').replace(/\[[^\]]*\]/g, ''))) out.push('regex: $ anchor (PCRE by default also matches before a final newline; ModSecurity 2 compiles with PCRE_DOLLAR_ENDONLY: the very end)');
  try {
    new RegExp(p, flags);
  } catch {
    out.push('regex: does not compile as a JavaScript RegExp');
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Classification

function paranoiaTagOf(rule: Rule): number | null {
  for (const t of rule.tags) {
    const m = /^paranoia-level\/(\d)$/.exec(t);
    if (m) return Number(m[1]);
  }
  return null;
}

function isParanoiaSkip(rule: Rule): number | null {
  const l = rule.links[0];
  if (rule.links.length !== 1 || !rule.skipAfter || !l.operator) return null;
  if (l.variables.length !== 1 || l.variables[0].name !== 'TX' || l.variables[0].selector?.kind !== 'name') return null;
  if (l.variables[0].selector.value.toUpperCase() !== 'EXECUTING_PARANOIA_LEVEL') return null;
  if (l.operator.name !== 'lt' || l.operator.negated) return null;
  const n = Number(l.operator.argument.trim());
  return Number.isInteger(n) ? n : null;
}

const NON_DISRUPTIVE_BOOKKEEPING = new Set(['id', 'phase', 'pass', 'nolog', 'log', 'noauditlog', 'auditlog', 't', 'ver', 'setvar', 'msg', 'tag', 'chain', 'logdata', 'severity', 'capture']);

function classify(rule: Rule, tag: number | null, scores: boolean, file: string): RuleKind {
  if (rule.id === 949110) return 'blocking-evaluation';
  // The §1.5 definition (tag + severity) misses scoring rules without a paranoia tag
  // (920181, 921200 in 3.3.4); a rule adding to tx.anomaly_score_plN is detection too.
  if ((tag !== null && rule.severity) || scores) return 'detection';
  if (isParanoiaSkip(rule) !== null) return 'paranoia-skip';
  const allActions = rule.links.flatMap((l) => l.actions);
  if (allActions.some((a) => a.name === 'ctl' && /^ruleRemove/i.test(a.value ?? ''))) return 'exclusion';
  if (rule.skipAfter !== undefined || rule.skip !== undefined) return 'skip';
  if (rule.disruptive && rule.disruptive !== 'pass' && rule.disruptive !== 'block') return 'enforcement';
  if (allActions.every((a) => NON_DISRUPTIVE_BOOKKEEPING.has(a.name)) && allActions.some((a) => a.name === 'setvar')) {
    const sv = rule.links.flatMap((l) => l.setvars);
    if (sv.every((s) => s.collection === 'tx' && s.key.toLowerCase() === 'anomaly_score')) return 'score-sum';
    // Outside 901, setvar-only rules collect state that later detection rules read
    // (921170 -> 921180 parameter names, 922140/922150 -> 922110 multipart types).
    return /^REQUEST-901-/.test(file) ? 'init' : 'collector';
  }
  return 'other';
}

function ruleFeatures(rule: Rule, dir: string): string[] {
  const f = new Set<string>();
  if (rule.links.length > 1) f.add(`chain (${rule.links.length} links)`);
  rule.links.forEach((l, i) => {
    f.add(`directive: ${l.directive}${i > 0 ? ' (chained link)' : ''}`);
    for (const v of l.variables) {
      const base = v.name;
      if (v.count) f.add(`variable: &${base} (count)`);
      else if (v.exclude) f.add(`variable: !${base} (exclusion)`);
      else f.add(`variable: ${base}`);
      if (v.selector) f.add(`variable selector: ${v.selector.kind}${v.exclude ? ' (in exclusion)' : ''}`);
      if (v.name === 'TX' && v.selector?.kind === 'name' && /^\d$/.test(v.selector.value)) f.add('variable: TX:N (capture group of an earlier link)');
    }
    if (l.operator) {
      const op = l.operator;
      f.add(`operator: ${op.negated ? '!' : ''}@${op.name}${op.implicit ? ' (implicit)' : ''}`);
      if (op.macros.hasMacros) f.add(`operator argument with %{macro} (@${op.name})`);
      if (op.name === 'rx') for (const r of regexFeatures(op.argument)) f.add(r);
      if (op.name === 'pmFromFile' || op.name === 'pmf' || op.name === 'ipMatchFromFile') {
        for (const file of op.argument.split(/\s+/).filter(Boolean)) {
          f.add(`data file: ${file}${existsSync(join(dir, file)) ? '' : ' (MISSING)'}`);
        }
      }
    }
    for (const t of l.transformationsWritten) f.add(`transformation: t:${t}`);
    // ModSecurity 2 (Apache's ap_getword_conf) reads `\\` in a quoted argument as one
    // backslash; libmodsecurity 3 keeps both (ModSecurity issue #2148, CRS issue #2179).
    if (l.args.operator?.quoted && l.args.operator.raw.includes('\\\\'))
      f.add('quoting: \\\\ in a quoted operator (one backslash for ModSecurity 2, two for libmodsecurity 3)');
    for (const a of l.actions) {
      switch (a.name) {
        case 't':
        case 'setvar':
        case 'ctl':
        case 'id':
        case 'chain':
          break;
        case 'msg':
        case 'logdata':
        case 'tag':
        case 'ver':
        case 'rev':
        case 'severity':
        case 'maturity':
        case 'accuracy':
        case 'phase':
          f.add(`metadata: ${a.name}`);
          break;
        default:
          f.add(`action: ${a.name}`);
      }
      if ((a.name === 'msg' || a.name === 'logdata') && a.value?.includes('%{')) f.add(`metadata: ${a.name} with %{macro}`);
    }
    for (const s of l.setvars) {
      const op = s.op === 'add' ? '=+' : s.op === 'subtract' ? '=-' : s.op === 'delete' ? '!' : '=';
      f.add(`setvar: ${s.collection}. ${op}`);
      if (s.value.hasMacros || s.keyMacros.hasMacros) f.add('setvar with %{macro}');
    }
    for (const c of l.ctls) f.add(`ctl: ${c.option}`);
  });
  if (rule.phase !== undefined) f.add(`phase: ${rule.phase}`);
  return [...f].sort();
}

function ref(r: { id: number | null; file: string; line: number }): string {
  return r.id !== null ? String(r.id) : `${r.file}:${r.line}`;
}

export function analyzeCrs(dir: string = DEFAULT_CRS_DIR): Analysis {
  const files: FileInfo[] = [];
  const problems: Problem[] = [];
  const inconsistencies: Inconsistency[] = [];
  const features = new Map<string, string[]>();
  for (const file of requestRuleFiles(dir)) {
    const parsed = parseSecLang(readFileSync(join(dir, file), 'utf8'), file);
    problems.push(...parsed.problems);
    const infos: RuleInfo[] = [];
    let section: number | null = null;
    for (const rule of rulesOf(parsed)) {
      const skipLevel = isParanoiaSkip(rule);
      const tag = paranoiaTagOf(rule);
      const scoresInto = rule.links
        .flatMap((l) => l.setvars)
        .map((s) => (s.collection === 'tx' && s.op === 'add' ? /^anomaly_score_pl(\d)$/i.exec(s.key) : null))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => Number(m[1]));
      const kind = classify(rule, tag, scoresInto.length > 0, file);
      const info: RuleInfo = {
        id: rule.id ?? null,
        file,
        line: rule.loc.line,
        kind,
        phase: rule.phase ?? null,
        paranoiaTag: tag,
        paranoiaSection: skipLevel !== null ? null : section,
        paranoiaLevel: tag ?? (skipLevel !== null ? null : section),
        severity: rule.severity ?? null,
        anomalyIncrement: rule.severity ? (ANOMALY_INCREMENT[rule.severity] ?? null) : null,
        scoresInto,
        msg: rule.msg ?? null,
        tags: rule.tags,
        chainLength: rule.links.length,
        features: ruleFeatures(rule, dir),
        rule,
      };
      if (skipLevel !== null) section = skipLevel;
      infos.push(info);
      for (const feat of info.features) {
        const list = features.get(feat) ?? [];
        list.push(ref(info));
        features.set(feat, list);
      }
      // Consistency checks between the tag, the section, the severity and the score setvar.
      const incon = (message: string) => inconsistencies.push({ id: info.id, file, line: info.line, message });
      if (kind === 'detection') {
        if (tag === null) incon(`scores but has no paranoia-level tag (PL${info.paranoiaSection} from its section)`);
        if (!rule.severity) incon('scores but has no severity');
        if (tag !== null && info.paranoiaSection !== null && info.paranoiaSection !== tag) incon(`tag paranoia-level/${tag} but in the PL${info.paranoiaSection} section`);
        if (scoresInto.length !== 1) incon(`adds to ${scoresInto.length} tx.anomaly_score_plN counters`);
        else if (tag !== null && scoresInto[0] !== tag) incon(`tag paranoia-level/${tag} but scores into tx.anomaly_score_pl${scoresInto[0]}`);
        const sev = (rule.severity ?? '').toLowerCase();
        const plSetvar = rule.links.flatMap((l) => l.setvars).find((s) => /^anomaly_score_pl\d$/i.test(s.key));
        if (plSetvar && plSetvar.value.text.toLowerCase() !== `%{tx.${sev}_anomaly_score}`)
          incon(`severity ${rule.severity} but adds ${plSetvar.value.text}`);
        if (rule.severity && info.anomalyIncrement === null) incon(`severity ${rule.severity} has no anomaly increment`);
        if (rule.phase !== 1 && rule.phase !== 2) incon(`phase ${rule.phase} is not a request phase`);
      } else if (scoresInto.length > 0) incon(`${kind} rule adds to tx.anomaly_score_pl${scoresInto.join(',')} without being a detection rule`);
    }
    files.push({ file, parsed, rules: infos });
  }
  return { dir, files, problems, inconsistencies, features };
}

// ---------------------------------------------------------------------------------------
// Summaries

export interface Counts {
  files: number;
  secRule: number;
  secAction: number;
  logicalRules: number;
  chainedRules: number;
  detection: number;
  /** Detection rules by the §1.5 definition: a paranoia-level tag and a severity. */
  taggedDetection: number;
  detectionByLevel: [number, number, number, number];
  bySeverity: Record<string, number>;
  byKind: Record<RuleKind, number>;
}

export function countAnalysis(a: Analysis, filter: (f: FileInfo) => boolean = () => true): Counts {
  const c: Counts = {
    files: 0,
    secRule: 0,
    secAction: 0,
    logicalRules: 0,
    chainedRules: 0,
    detection: 0,
    taggedDetection: 0,
    detectionByLevel: [0, 0, 0, 0],
    bySeverity: {},
    byKind: { detection: 0, 'paranoia-skip': 0, 'blocking-evaluation': 0, 'score-sum': 0, init: 0, collector: 0, exclusion: 0, skip: 0, enforcement: 0, other: 0 },
  };
  for (const f of a.files.filter(filter)) {
    c.files++;
    c.secRule += f.parsed.counts.secRule;
    c.secAction += f.parsed.counts.secAction;
    for (const r of f.rules) {
      c.logicalRules++;
      if (r.chainLength > 1) c.chainedRules++;
      c.byKind[r.kind]++;
      if (r.kind === 'detection') {
        c.detection++;
        if (r.paranoiaTag !== null && r.severity) c.taggedDetection++;
        if (r.paranoiaLevel && r.paranoiaLevel >= 1 && r.paranoiaLevel <= 4) c.detectionByLevel[r.paranoiaLevel - 1]++;
        const sev = r.severity ?? 'none';
        c.bySeverity[sev] = (c.bySeverity[sev] ?? 0) + 1;
      }
    }
  }
  return c;
}

export interface CoverageOptions {
  /** Features the converter handles; those not in it are listed as unsupported. Omitted:
   * no conversion yet, every feature is listed with status "pending". */
  supported?: (feature: string) => boolean;
  /** Rule ids (as in `ref`) the converter emitted. Omitted: none yet. */
  converted?: Set<string>;
}

const CATEGORY_ORDER = ['directive', 'chain', 'phase', 'variable', 'variable selector', 'operator', 'regex', 'quoting', 'data file', 'transformation', 'action', 'setvar', 'ctl', 'metadata'];

function categoryOf(feature: string): string {
  for (const c of CATEGORY_ORDER) if (feature.startsWith(c)) return c;
  return 'other';
}

export function renderCoverage(a: Analysis, opts: CoverageOptions = {}): string {
  const out: string[] = [];
  const total = countAnalysis(a);
  const converted = opts.converted;
  out.push('# CRS 3.3.4 coverage report (request rules)', '');
  out.push(`Source: \`${a.dir}\`, ${total.files} REQUEST-9xx files, ${total.secRule} SecRule + ${total.secAction} SecAction directives, ${total.logicalRules} logical rules (${total.chainedRules} chained).`);
  out.push(`Parse problems: ${a.problems.length}. Detection rules (scoring into tx.anomaly_score_plN, or with a paranoia-level tag and a severity): ${total.detection}, of which ${total.taggedDetection} tagged — PL1 ${total.detectionByLevel[0]}, PL2 ${total.detectionByLevel[1]}, PL3 ${total.detectionByLevel[2]}, PL4 ${total.detectionByLevel[3]}; severities ${Object.entries(total.bySeverity).map(([k, v]) => `${k} ${v}`).join(', ')}.`);
  out.push(`Rule kinds: ${Object.entries(total.byKind).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`).join(', ')}.`);
  out.push(converted ? '' : 'No rule is converted yet: this is the analysis step; "converted" counts come from the converter.', '');

  out.push('## Rules per file', '');
  out.push('| File | Converted / detection rules | Detection PL1/2/3/4 | Logical rules (chained) | Other kinds |');
  out.push('|---|---|---|---|---|');
  for (const f of a.files) {
    const c = countAnalysis(a, (x) => x === f);
    const conv = f.rules.filter((r) => r.kind === 'detection' && converted?.has(ref(r))).length;
    const kinds = Object.entries(c.byKind).filter(([k, v]) => k !== 'detection' && v > 0).map(([k, v]) => `${k} ${v}`).join(', ');
    out.push(`| ${f.file} | ${conv} / ${c.detection} | ${c.detectionByLevel.join('/')} | ${c.logicalRules} (${c.chainedRules}) | ${kinds || '–'} |`);
  }
  out.push(`| **total** | ${a.files.flatMap((f) => f.rules).filter((r) => r.kind === 'detection' && converted?.has(ref(r))).length} / ${total.detection} | ${total.detectionByLevel.join('/')} | ${total.logicalRules} (${total.chainedRules}) | |`, '');

  if (a.problems.length) {
    out.push('## Parse problems', '');
    for (const p of a.problems) out.push(`- ${p.file}:${p.line}: ${p.message}`);
    out.push('');
  }
  out.push('## Inconsistencies (tag vs section vs score)', '');
  if (a.inconsistencies.length === 0) out.push('None.');
  for (const i of a.inconsistencies) out.push(`- ${i.id ?? '?'} (${i.file}:${i.line}): ${i.message}`);
  out.push('');

  const detectionIds = new Set(a.files.flatMap((f) => f.rules).filter((r) => r.kind === 'detection').map(ref));
  out.push('## SecLang features', '');
  out.push('Each feature with the number of rules using it (detection rules among them) and their ids. Status: ' + (opts.supported ? '"supported" or "NOT SUPPORTED" by the converter.' : '"pending" (no converter yet).'), '');
  const byCat = new Map<string, string[]>();
  for (const feat of [...a.features.keys()].sort()) {
    const c = categoryOf(feat);
    byCat.set(c, [...(byCat.get(c) ?? []), feat]);
  }
  for (const cat of [...CATEGORY_ORDER, 'other']) {
    const feats = byCat.get(cat);
    if (!feats) continue;
    out.push(`### ${cat}`, '');
    out.push('| Feature | Rules | Detection | Status | Rule ids |', '|---|---|---|---|---|');
    for (const feat of feats) {
      const ids = a.features.get(feat)!;
      const det = ids.filter((i) => detectionIds.has(i)).length;
      const status = opts.supported ? (opts.supported(feat) ? 'supported' : '**NOT SUPPORTED**') : 'pending';
      out.push(`| ${feat.replace(/\|/g, '\\|')} | ${ids.length} | ${det} | ${status} | ${ids.join(' ')} |`);
    }
    out.push('');
  }
  if (opts.supported) {
    out.push('## Unsupported features and the rules they affect', '');
    const unsupported = [...a.features.keys()].filter((f) => !opts.supported!(f)).sort();
    if (unsupported.length === 0) out.push('None.');
    for (const feat of unsupported) out.push(`- ${feat}: ${a.features.get(feat)!.join(' ')}`);
    out.push('');
  }
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------
// Command line

export const MISSING_CRS_HELP =
  'The CRS 3.3.4 rules are missing. Install Debian\'s package (as root): `apt-get install -y --no-install-recommends modsecurity-crs` ' +
  '(or run `node scripts/crs/ensure-crs.mjs`, which does it when run as root), or pass --crs DIR / set CRS_RULES_DIR to a CRS 3.3.4 rules folder.';

function main(argv: string[]): number {
  let dir = process.env.CRS_RULES_DIR || DEFAULT_CRS_DIR;
  let outFile: string | undefined;
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--crs' && argv[i + 1]) dir = argv[++i];
    else if (a === '--out' && argv[i + 1]) outFile = argv[++i];
    else if (a === '--json') json = true;
    else {
      console.error(`unknown argument ${a}\nusage: node --import tsx scripts/crs/analyze.ts [--crs DIR] [--out FILE] [--json]`);
      return 2;
    }
  }
  if (!existsSync(dir)) {
    console.error(`${dir}: no such folder. ${MISSING_CRS_HELP}`);
    return 2;
  }
  const analysis = analyzeCrs(dir);
  let text: string;
  if (json) {
    text = JSON.stringify(
      {
        dir: analysis.dir,
        counts: countAnalysis(analysis),
        problems: analysis.problems,
        inconsistencies: analysis.inconsistencies,
        files: analysis.files.map((f) => ({ file: f.file, counts: f.parsed.counts, rules: f.rules.map(({ rule: _rule, ...r }) => r) })),
        features: Object.fromEntries(analysis.features),
      },
      null,
      1,
    );
  } else text = renderCoverage(analysis);
  if (outFile) {
    mkdirSync(dirname(outFile), { recursive: true });
    writeFileSync(outFile, text + '\n');
    const c = countAnalysis(analysis);
    console.error(`${outFile}: ${c.files} files, ${c.logicalRules} rules, ${c.detection} detection rules, ${analysis.problems.length} parse problems`);
  } else process.stdout.write(text + '\n');
  return analysis.problems.length ? 1 : 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = main(process.argv.slice(2));
