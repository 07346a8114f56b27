/**
 * `rulesmith preview --config ENTRY.ruleset.json [--custom FILE ...] [--attacks DIR]
 *  [--max-attacks N] [--requests FILE_OR_DIR] [--thresholds 25,40,60] [--format text|json]`:
 * the paranoia-level × threshold matrix of the scored managed ruleset (OWASP-based) the
 * configuration deploys (managed/preview.ts), for two sets of requests:
 * - attacks (more acted on is better): the built-in corpus, the OWASP CRS 3.3.4 regression
 *   requests the build ships beside the CLI, or the ftw YAML under `--attacks DIR`
 *   (recursively), which replaces it; at most `--max-attacks` (1000) of them, spread evenly;
 * - your requests (anything acted on is a likely false positive), with `--requests`: a
 *   file, or a directory whose .http, .yaml/.yml and .json files (not recursively, in name
 *   order) all count.
 * `--config` takes the shapes `eval --config` takes.
 *
 * Exit status: 0 printed, 2 bad usage or unusable input (as `eval --config`).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { previewParanoia, SCORE_COUNTING_NOTE, type ParanoiaPreview } from '../managed/preview';
import { sampleEvenly } from '../requests/attackCorpus';
import { requestValues } from '../requests/fields';
import { CorpusError, loadBuiltInCorpus, loadCorpusFolder, type LoadedCorpus } from '../corpusFiles';
import { checkOptions, outputFormat } from './check';
import { compileLoadedZone, loadRequests, loadZone, type LoadedRequest } from './eval';
import { fsReason } from './files';
import { InputError, parseOptions, UsageError, wholeNumber } from './input';
import type { Io, Parsed } from './io';

const REQUEST_FILE = /\.(http|ya?ml|json)$/i;
/** As the extension's rulesmith.preview.maxCorpusRequests: about 3 s for the four levels. */
const DEFAULT_MAX_ATTACKS = 1000;

export function runPreviewCommand(args: readonly string[], io: Io): number {
  const p = parseOptions(args, {
    config: { type: 'string', multiple: true },
    custom: { type: 'string', multiple: true },
    requests: { type: 'string' },
    attacks: { type: 'string' },
    'max-attacks': { type: 'string' },
    thresholds: { type: 'string' },
    format: { type: 'string' },
    plan: { type: 'string' },
  });
  const values = p.values as Parsed['values'];
  const format = outputFormat(values);
  const plan = checkOptions(values).plan;
  const config = p.values.config as string[] | undefined;
  const requestsPath = p.values.requests as string | undefined;
  if (config === undefined) throw new UsageError('preview needs --config ENTRY.ruleset.json');
  if (p.files.length > 0) throw new UsageError(`unexpected argument "${p.files[0]}"`);
  const thresholds = parseThresholds(p.values.thresholds as string | undefined);
  const maxAttacks = parseMaxAttacks(p.values['max-attacks'] as string | undefined);
  const attacksDir = p.values.attacks as string | undefined;
  const loaded = loadZone(io, config, (p.values.custom as string[] | undefined) ?? [], plan);
  compileLoadedZone(loaded, io);
  const corpus = readCorpus(attacksDir);
  const requests = requestsPath === undefined ? undefined : readRequests(io, requestsPath);
  const attacks = sampleEvenly(corpus.entries, maxAttacks);
  const attackPreview = previewParanoia(loaded.zone, attacks.map((e) => requestValues(e.request).values), thresholds);
  if (attackPreview.error) throw new InputError([`rulesmith: ${config.join(', ')}: ${attackPreview.error}`]);
  const ownPreview = requests && previewParanoia(loaded.zone, requests.map((r) => r.fields), thresholds);
  const attackSet = { source: corpus.label, builtIn: attacksDir === undefined, available: corpus.entries.length };
  if (format === 'json') {
    const out = {
      attacks: { ...attackSet, ...attackPreview, requests: attackPreview.requests.map((r) => ({ ...r, test: attacks[r.index].test, rules: attacks[r.index].rules })) },
      ...(requests && ownPreview ? { yourRequests: { source: requestsPath, ...ownPreview, requests: ownPreview.requests.map((r) => ({ ...r, ...requestName(requests[r.index]) })) } } : {}),
    };
    io.out(`${JSON.stringify(out, null, 2)}\n`);
  } else {
    io.out(headerText(attackPreview));
    io.out(attacksText(attackPreview, attackSet, attacksDir === undefined));
    if (requests && ownPreview) io.out(`\n${ownText(ownPreview, requests, requestsPath!)}`);
  }
  return 0;
}

/** The built-in corpus, or the one under --attacks DIR; an InputError when it is unusable. */
function readCorpus(dir: string | undefined): LoadedCorpus {
  try {
    return dir === undefined ? loadBuiltInCorpus() : loadCorpusFolder(dir);
  } catch (e) {
    if (e instanceof CorpusError) throw new InputError([`rulesmith: ${dir === undefined ? '' : '--attacks: '}${e.message}`]);
    throw e;
  }
}

function parseMaxAttacks(text: string | undefined): number {
  if (text === undefined) return DEFAULT_MAX_ATTACKS;
  const n = wholeNumber(text);
  if (n === undefined || n < 1) throw new UsageError(`--max-attacks must be a positive whole number (got "${text}")`);
  return n;
}

function parseThresholds(text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  const parts = text.split(',').map((s) => s.trim());
  const nums = parts.map(wholeNumber);
  if (nums.some((n) => n === undefined || n < 1)) {
    throw new UsageError(`--thresholds must be positive whole numbers separated by commas, e.g. 25,40,60 (got "${text}")`);
  }
  return nums as number[];
}

function readRequests(io: Io, path: string): LoadedRequest[] {
  let text: string | undefined;
  try {
    text = io.readFile(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR') throw new InputError([`rulesmith: cannot read requests ${path}: ${fsReason(e)}`]);
  }
  if (text !== undefined) return loadRequests(io, path, text);
  let names: string[];
  try {
    names = readdirSync(path).filter((n) => REQUEST_FILE.test(n)).sort();
  } catch (e) {
    throw new InputError([`rulesmith: cannot list ${path}: ${fsReason(e)}`]);
  }
  if (names.length === 0) throw new InputError([`rulesmith: ${path}: no .http, .yaml or .json request files in this directory`]);
  const all: LoadedRequest[] = [];
  for (const n of names) for (const r of loadRequests(io, join(path, n))) all.push({ ...r, index: all.length });
  return all;
}

function requestName(r: LoadedRequest): { file: string; name?: string; line?: number } {
  return { file: r.file, ...(r.name ? { name: r.name } : {}), ...(r.line !== undefined ? { line: r.line } : {}) };
}

function headerText(p: ParanoiaPreview): string {
  return [
    `${p.rulesetName ?? p.rulesetId} · now PL${p.currentLevel} · threshold ${p.currentThreshold} · action ${p.anomalyAction ?? 'block'}`,
    'each cell: requests acted on at that paranoia level and threshold (score >= threshold)',
    `note: ${SCORE_COUNTING_NOTE}`,
    '',
  ].join('\n') + '\n';
}

function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

function attacksText(p: ParanoiaPreview, set: { source: string; available: number }, builtIn: boolean): string {
  const count = set.available > p.total ? `${p.total} of ${plural(set.available, 'request')} (spread evenly; --max-attacks N for more)` : plural(p.total, 'request');
  const out = [
    `Attacks: ${count} from ${set.source} — more acted on is better${builtIn ? ' (--attacks DIR: your own ftw YAML instead)' : ''}`,
    ...matrixLines(p),
  ];
  return `${out.join('\n')}\n`;
}

function ownText(p: ParanoiaPreview, requests: readonly LoadedRequest[], source: string): string {
  const out = [`Your requests: ${plural(p.total, 'request')} from ${source} — anything acted on is a likely false positive`, ...matrixLines(p)];
  out.push('');
  out.push('scores per request (PL1 PL2 PL3 PL4):');
  for (const r of p.requests) {
    const req = requests[r.index];
    out.push(`  #${r.index + 1}${req.name ? ` ${req.name}` : ''}: ${r.scores.join(' ')}`);
  }
  return `${out.join('\n')}\n`;
}

/** The matrix and its deciding rules. */
function matrixLines(p: ParanoiaPreview): string[] {
  const out: string[] = [];
  const head = ['', ...p.thresholds.map((t) => `>=${t}${t === p.currentThreshold ? '*' : ''}`), 'rules on'];
  const rows = p.levels.map((l) => [`PL${l.level}${l.level === p.currentLevel ? '*' : ''}`, ...l.cells.map((c) => `${c.actedOn}/${p.total}`), `${l.enabledRules}/${l.rules.length}`]);
  const widths = head.map((_, i) => Math.max(...[head, ...rows].map((r) => r[i].length)));
  for (const r of [head, ...rows]) out.push(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('   ').trimEnd());
  out.push('(* = current)');
  out.push('');
  out.push('deciding rules (most frequent first):');
  if (p.levels.every((l) => l.cells.every((c) => c.deciders.length === 0))) out.push('  none: no request is acted on at any level or threshold');
  for (const l of p.levels) {
    for (const c of l.cells) {
      if (c.deciders.length === 0) continue;
      out.push(`  PL${l.level} >=${c.threshold}: ${c.deciders.map((d) => `${d.description ?? d.ref ?? d.ruleId ?? '?'} ×${d.count}`).join('; ')}`);
    }
  }
  return out;
}
