/**
 * The attack corpus of the paranoia preview: CRS regression test stages that expect a rule
 * to fire (`log_contains` naming a rule id), as requests. Two sources give the same entries:
 * a folder of ftw YAML files (the `rulesmith.preview.attackCorpus` setting, `--attacks DIR`),
 * and the compact corpus file the build generates from the vendored CRS 3.3.4 tests
 * (scripts/attack-corpus.ts), which the extension and the CLI ship as the default.
 *
 * Not attacks, so left out: stages that expect a rule not to fire (`no_log_contains`) or
 * only a status, tests ftw skips (`enabled: false`), and stages a web server rejects before
 * the WAF runs (`serverRejection`).
 */
import { ftwRuleId, parseFtwFile } from './ftw';
import type { SampleRequest } from './types';

export interface AttackEntry {
  /** The CRS test id (`942100-1`), with ` (stage N)` for a stage of a multi-stage test. */
  readonly test: string;
  /** The rule ids the test expects in the log. */
  readonly rules: readonly string[];
  readonly request: SampleRequest;
}

export interface AttackCorpus {
  /** Where the entries come from, for people (`OWASP CRS 3.3.4 regression tests`). */
  readonly source: string;
  readonly entries: readonly AttackEntry[];
}

/** The compact file's format tag; a file with another tag is refused. */
export const ATTACK_CORPUS_FORMAT = 'rulesmith-attack-corpus/1';

/** The attack stages of ftw files, in the order given; problems are `path:line: message`. */
export function attackEntries(files: readonly { readonly path: string; readonly text: string }[]): { entries: AttackEntry[]; problems: string[] } {
  const entries: AttackEntry[] = [];
  const problems: string[] = [];
  for (const file of files) {
    const parsed = parseFtwFile(file.text);
    for (const p of parsed.problems) problems.push(`${file.path}:${p.line + 1}: ${p.message}`);
    for (const t of parsed.tests) {
      if (t.enabled === false) continue;
      for (const s of t.stages) {
        const rule = s.output.logContains === undefined ? undefined : ftwRuleId(s.output.logContains);
        if (rule === undefined || s.rejected !== undefined) continue;
        entries.push({ test: s.request.name ?? t.title, rules: [rule], request: s.request });
      }
    }
  }
  return { entries, problems };
}

/**
 * The compact file: JSON, one entry per line, each `[test, rules, method, url, version,
 * headers, body, meta]` (body `null` when none, meta `{}` when none). The same corpus always
 * gives the same text.
 */
export function encodeAttackCorpus(corpus: AttackCorpus): string {
  const rows = corpus.entries.map((e) => {
    const r = e.request;
    return JSON.stringify([e.test, e.rules, r.method, r.url, r.httpVersion, r.headers, r.body ?? null, sortedRecord(r.meta)]);
  });
  return `{"format":${JSON.stringify(ATTACK_CORPUS_FORMAT)},"source":${JSON.stringify(corpus.source)},"entries":[\n${rows.join(',\n')}\n]}\n`;
}

/** Reads the compact file; throws an Error saying what is wrong with it. */
export function decodeAttackCorpus(text: string): AttackCorpus {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new Error(`not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  const top = data as { format?: unknown; source?: unknown; entries?: unknown } | null;
  if (typeof top !== 'object' || top === null || top.format !== ATTACK_CORPUS_FORMAT) {
    throw new Error(`not a ${ATTACK_CORPUS_FORMAT} file (format ${JSON.stringify(top?.format)})`);
  }
  if (typeof top.source !== 'string' || !Array.isArray(top.entries)) throw new Error('expected "source" (text) and "entries" (a list)');
  const entries = top.entries.map((row: unknown, i: number): AttackEntry => {
    if (!isRow(row)) throw new Error(`entry ${i + 1} is not [test, rules, method, url, version, headers, body, meta]`);
    const [test, rules, method, url, httpVersion, headers, body, meta] = row;
    return { test, rules, request: { name: test, method, url, httpVersion, headers, ...(body !== null ? { body } : {}), meta, wire: true } };
  });
  return { source: top.source, entries };
}

type Row = [string, string[], string, string, string, [string, string][], string | null, Record<string, string>];

function isRow(v: unknown): v is Row {
  if (!Array.isArray(v) || v.length !== 8) return false;
  const [test, rules, method, url, version, headers, body, meta] = v;
  const str = (x: unknown): x is string => typeof x === 'string';
  return (
    str(test) && Array.isArray(rules) && rules.every(str) && str(method) && str(url) && str(version) &&
    Array.isArray(headers) && headers.every((h) => Array.isArray(h) && h.length === 2 && str(h[0]) && str(h[1])) &&
    (body === null || str(body)) &&
    typeof meta === 'object' && meta !== null && !Array.isArray(meta) && Object.values(meta).every(str)
  );
}

function sortedRecord(r: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** At most `max` items, every (length / max)-th, so that they spread over the whole list. */
export function sampleEvenly<T>(xs: readonly T[], max: number): T[] {
  if (xs.length <= max) return [...xs];
  const step = xs.length / max;
  return Array.from({ length: max }, (_, i) => xs[Math.floor(i * step)]);
}
