/**
 * `rulesmith preview --config ENTRY.ruleset.json --requests FILE_OR_DIR [--custom FILE ...]
 *  [--thresholds 25,40,60] [--format text|json]`: the paranoia-level × threshold matrix of
 * the scored managed ruleset (OWASP-based) the configuration deploys, over a set of
 * requests (managed/preview.ts). `--config` takes the shapes `eval --config` takes; a
 * directory given to `--requests` contributes every .http, .yaml/.yml and .json file in
 * it (not recursively), in name order.
 *
 * Exit status: 0 printed, 2 bad usage or unusable input (as `eval --config`).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { previewParanoia, type ParanoiaPreview } from '../managed/preview';
import { checkOptions, outputFormat } from './check';
import { compileLoadedZone, loadRequests, loadZone, type LoadedRequest } from './eval';
import { fsReason } from './files';
import { InputError, parseOptions, UsageError, wholeNumber } from './input';
import type { Io, Parsed } from './main';

const REQUEST_FILE = /\.(http|ya?ml|json)$/i;

export function runPreviewCommand(args: readonly string[], io: Io): number {
  const p = parseOptions(args, {
    config: { type: 'string', multiple: true },
    custom: { type: 'string', multiple: true },
    requests: { type: 'string' },
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
  if (requestsPath === undefined) throw new UsageError('preview needs --requests FILE_OR_DIR');
  if (p.files.length > 0) throw new UsageError(`unexpected argument "${p.files[0]}"`);
  const thresholds = parseThresholds(p.values.thresholds as string | undefined);
  const loaded = loadZone(io, config, (p.values.custom as string[] | undefined) ?? [], plan);
  compileLoadedZone(loaded, io);
  const requests = readRequests(io, requestsPath);
  const preview = previewParanoia(loaded.zone, requests.map((r) => r.fields), thresholds);
  if (preview.error) throw new InputError([`rulesmith: ${config.join(', ')}: ${preview.error}`]);
  if (format === 'json') {
    io.out(`${JSON.stringify({ ...preview, requests: preview.requests.map((r) => ({ ...r, ...requestName(requests[r.index]) })) }, null, 2)}\n`);
  } else {
    io.out(matrixText(preview, requests));
  }
  return 0;
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

function matrixText(p: ParanoiaPreview, requests: readonly LoadedRequest[]): string {
  const out: string[] = [];
  out.push(`${p.rulesetName ?? p.rulesetId} · now PL${p.currentLevel} · threshold ${p.currentThreshold} · action ${p.anomalyAction ?? 'block'}`);
  out.push(`${p.total} request${p.total === 1 ? '' : 's'}; each cell: requests acted on at that paranoia level and threshold (score >= threshold)`);
  out.push('');
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
  out.push('');
  out.push('scores per request (PL1 PL2 PL3 PL4):');
  for (const r of p.requests) {
    const req = requests[r.index];
    out.push(`  #${r.index + 1}${req.name ? ` ${req.name}` : ''}: ${r.scores.join(' ')}`);
  }
  return `${out.join('\n')}\n`;
}
