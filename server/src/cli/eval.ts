/**
 * `rulesmith eval`: two modes.
 *
 *   eval --expr 'EXPRESSION' --fields FIELDS.json [--format text|json]
 *     evaluates one expression against field values given as JSON.
 *
 *   eval --config ENTRY.ruleset.json [--custom CUSTOM.ruleset.json ...] --requests FILE
 *        [--format text|json] [--trace] [--plan PLAN] [--body-limit BYTES]
 *     runs every request of FILE through a zone's WAF configuration with the engine
 *     (rulesets/engine.ts) and prints, per request, the final action, the deciding rule,
 *     the rules that matched and the anomaly score; `--trace` adds every rule looked at.
 *
 * `--config` (which may repeat, one entry point per phase) accepts three shapes:
 *   1. one entry-point ruleset: `{"phase": "http_request_firewall_managed", "rules": [...]}`
 *      (or an API response, `{"result": {...}}`); its `phase` says where it runs;
 *   2. an object mapping phases to entry points:
 *      `{"http_request_firewall_custom": {"rules": [...]}, "http_request_firewall_managed": {...}}`
 *      (a value may also be a bare array of rules);
 *   3. a whole zone: `{"entryPoints": {...as 2...}, "customRulesets": [...], "plan": "pro",
 *      "legacy": {"firewallRules": [...], "migrated": false, "validationMode": false}}`.
 * `--custom` files hold a custom ruleset with its `id` (or an API response, or an array of
 * rulesets); `execute` rules run them by id. Managed rulesets come from the built-in catalog.
 *
 * `--requests` reads a `.http` file (REST-Client style, `###` between requests), a CRS ftw
 * `.yaml`/`.yml` file (every stage of every test), or `.json` field values (one object, or
 * an array of objects). `--body-limit` is how many bytes of each body become field values
 * (default 131072, 128 KiB; at most 67108864); a `< ./file` body is read only that far.
 *
 * Exit status: 0 when every request was evaluated (whatever the verdicts), 2 for bad usage
 * or input that cannot be used: an unreadable file, invalid JSON, a configuration with
 * errors (which file, which rule), a malformed request (which file, which request).
 */
import { compileExpression, prepareFields } from '../language/index';
import type { FieldValues } from '../language/evaluate';
import { engineReport } from '../language/report';
import type { Plan } from '../language/scheme/types';
import { defaultCatalog } from '../managed/catalog';
import type { ManagedCatalog } from '../rulesets/catalog';
import { dirname, isAbsolute, join } from 'node:path';
import { DEFAULT_BODY_LIMIT, parseBodyLimit, withBodyFiles } from '../requests/body';
import { parseFtwFile } from '../requests/ftw';
import { requestValues } from '../requests/fields';
import { parseHttpFile } from '../requests/http';
import type { SampleRequest } from '../requests/types';
import type { CompiledZone, Evaluation, TraceEntry } from '../rulesets/engine';
import { describeRule, type RuleNaming } from '../rulesets/ruleNames';
import { checkZone, loadZoneFiles, rulesetNames, ZoneFileError, type LoadedZone } from '../rulesets/zoneFile';
import { checkOptions, outputFormat } from './check';
import { fsReason, readHead } from './files';
import { InputError, inputName, parseOptions, readFileOrStdin, readInput, UsageError, type OptionValues } from './input';
import type { Io, Parsed } from './io';

/** Entry of the `eval` command: parses its own arguments (`--custom` may repeat). */
export function runEvalCommand(args: readonly string[], io: Io): number {
  const p = parseOptions(args, {
    expr: { type: 'string' },
    fields: { type: 'string' },
    format: { type: 'string' },
    phase: { type: 'string' },
    plan: { type: 'string' },
    config: { type: 'string', multiple: true },
    custom: { type: 'string', multiple: true },
    requests: { type: 'string' },
    trace: { type: 'boolean' },
    'body-limit': { type: 'string' },
  });
  if (p.values.config !== undefined) {
    if (p.values.expr !== undefined || p.values.fields !== undefined) throw new UsageError('give either --config with --requests, or --expr with --fields');
    return runEvalConfig(p, io);
  }
  for (const k of ['custom', 'requests', 'trace', 'body-limit'] as const) {
    if (p.values[k] !== undefined) throw new UsageError(`--${k} goes with --config`);
  }
  return runEval({ values: p.values as Parsed['values'], files: p.files }, io);
}

export function runEval(p: Parsed, io: Io): number {
  const format = outputFormat(p.values);
  const options = checkOptions(p.values);
  const expr = p.values.expr as string | undefined;
  const fieldsFile = p.values.fields as string | undefined;
  if (expr === undefined) throw new UsageError('eval needs --expr (or --config with --requests)');
  if (fieldsFile === undefined) throw new UsageError('eval needs --fields FILE.json (use "{}" in a file for no fields)');
  if (p.files.length > 0) throw new UsageError(`unexpected argument "${p.files[0]}"`);

  const text = readFileOrStdin(io, fieldsFile, 'field values from');
  const source = inputName(fieldsFile);
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch (e) {
    throw new InputError([`rulesmith: cannot read field values from ${source}: invalid JSON: ${(e as Error).message}`]);
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InputError([`rulesmith: ${source} must hold a JSON object of field values, e.g. {"http.host": "example.com"}`]);
  }

  const { filter, diagnostics } = compileExpression(expr, options);
  const { values, errors } = prepareFields(input as Record<string, unknown>);
  const exprErrors = diagnostics.filter((d) => d.severity === 'error');
  if (!filter || errors.length > 0) {
    if (format === 'json') {
      io.out(`${JSON.stringify({ matched: null, diagnostics: exprErrors, fieldErrors: errors }, null, 2)}\n`);
    } else {
      for (const d of exprErrors) io.err(`${engineReport(expr, d)}${d.hint ? `hint: ${d.hint}\n` : ''}`);
      for (const e of errors) io.err(`${source}: ${e.message}\n`);
    }
    return 2;
  }
  const matched = filter.matches(values);
  io.out(format === 'json' ? `${JSON.stringify({ matched })}\n` : `${matched}\n`);
  return 0;
}

// --- Input: the zone ---------------------------------------------------------------------
// The shapes and their checks are the core's (rulesets/zoneFile.ts, shared with the
// editor's "Evaluate"); this reads the files and turns problems into exit status 2.

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export type { LoadedZone };

/**
 * Reads the zone from one or more `--config` files (each of the three shapes; entry points
 * merge, and a phase given twice is an error) and the `--custom` files.
 */
export function loadZone(io: Io, configFiles: readonly string[], customFiles: readonly string[], plan: Plan | undefined, catalog: ManagedCatalog = defaultCatalog): LoadedZone {
  try {
    return loadZoneFiles(configFiles, customFiles, (file, role) => readInput(io, file, role), { plan, catalog });
  } catch (e) {
    if (e instanceof ZoneFileError) throw new InputError([`rulesmith: ${e.message}`]);
    throw e;
  }
}

/** Compiles the zone; errors (validator's and engine's) become an InputError naming file and rule. */
export function compileLoadedZone(loaded: LoadedZone, io: Io): CompiledZone {
  const { compiled, errors, warnings } = checkZone(loaded);
  for (const w of warnings) io.err(`${w.message}\n`);
  if (errors.length > 0) throw new InputError(errors.map((e) => e.message));
  return compiled;
}

// --- Input: the requests -------------------------------------------------------------------

export interface LoadedRequest {
  readonly file: string;
  readonly index: number;
  readonly name?: string;
  /** 1-based line in the file, when known. */
  readonly line?: number;
  readonly fields: FieldValues;
}

/** `--body-limit BYTES` (body.ts): the inspection limit, or the default. */
export function bodyLimitOption(values: OptionValues): number {
  const text = values['body-limit'];
  if (text === undefined) return DEFAULT_BODY_LIMIT;
  const r = parseBodyLimit(String(text), '--body-limit');
  if ('error' in r) throw new UsageError(r.error);
  return r.limit;
}

/**
 * Reads one requests file; malformed requests become an InputError naming file and request.
 * A `.http` body file (`< ./upload.bin`) is read relative to the file, up to `bodyLimit`.
 */
export function loadRequests(io: Io, file: string, text = readInput(io, file, 'requests file'), bodyLimit = DEFAULT_BODY_LIMIT): LoadedRequest[] {
  const problems: string[] = [];
  const out: LoadedRequest[] = [];
  const readBodyFile = (path: string, maxBytes: number) => {
    const where = isAbsolute(path) ? path : join(dirname(file), path);
    try {
      return (io.readHead ?? readHead)(where, maxBytes);
    } catch (e) {
      throw new Error(`${fsReason(e)} (looked for ${where}: a relative path is from the requests file's folder)`);
    }
  };
  const fromSample = (sample: SampleRequest, name: string | undefined, line: number | undefined) => {
    const index = out.length;
    const label = `${file}: request ${index + 1}${name ? ` "${name}"` : ''}${line !== undefined ? ` (line ${line})` : ''}`;
    const read = withBodyFiles(sample, bodyLimit, readBodyFile);
    for (const p of read.problems) problems.push(`${file}:${p.line + 1}: ${p.message}`);
    const { values, problems: found } = requestValues(read.request, { bodyLimit });
    for (const p of found) problems.push(`${label}: ${p}`);
    out.push({ file, index, name, line, fields: values });
  };
  if (/\.json$/i.test(file)) {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new InputError([`rulesmith: ${file}: invalid JSON: ${(e as Error).message}`]);
    }
    const list = Array.isArray(v) ? v : [v];
    list.forEach((x, i) => {
      if (!isObject(x)) {
        problems.push(`${file}: request ${i + 1}: expected an object of field values, e.g. {"http.request.uri.path": "/"}`);
        return;
      }
      const { values, errors } = prepareFields(x);
      for (const e of errors) problems.push(`${file}: request ${i + 1}: ${e.field}: ${e.message}`);
      out.push({ file, index: i, fields: values });
    });
  } else if (/\.ya?ml$/i.test(file)) {
    const r = parseFtwFile(text);
    for (const p of r.problems) problems.push(`${file}:${p.line + 1}: ${p.message}`);
    for (const t of r.tests) {
      t.stages.forEach((s, si) => fromSample(s.request, t.stages.length > 1 ? `${t.title} stage ${si + 1}` : t.title, s.request.source ? s.request.source.line + 1 : undefined));
    }
  } else {
    const r = parseHttpFile(text);
    for (const p of r.problems) problems.push(`${file}:${p.line + 1}: ${p.message}`);
    for (const req of r.requests) fromSample(req, req.name, req.source ? req.source.line + 1 : undefined);
  }
  if (problems.length > 0) throw new InputError(problems.map((p) => `rulesmith: ${p}`));
  if (out.length === 0) throw new InputError([`rulesmith: ${file}: no requests found`]);
  return out;
}

// --- eval --config -----------------------------------------------------------------------

function runEvalConfig(p: { values: OptionValues; files: string[] }, io: Io): number {
  const values = p.values as Parsed['values'];
  const format = outputFormat(values);
  const plan = checkOptions(values).plan;
  if (p.values.phase !== undefined) throw new UsageError('--phase does not go with --config: each entry point says its phase');
  const config = p.values.config as string[];
  const requestsFile = p.values.requests as string | undefined;
  if (requestsFile === undefined) throw new UsageError('eval --config needs --requests FILE (.http, ftw .yaml, or .json field values)');
  if (p.files.length > 0) throw new UsageError(`unexpected argument "${p.files[0]}"`);
  const trace = p.values.trace === true;
  const loaded = loadZone(io, config, (p.values.custom as string[] | undefined) ?? [], plan);
  const zone = compileLoadedZone(loaded, io);
  const requests = loadRequests(io, requestsFile, undefined, bodyLimitOption(p.values));
  const results = requests.map((r) => ({ request: r, ev: zone.evaluate(r.fields) }));
  const names = rulesetNames(loaded.zone);
  if (format === 'json') {
    io.out(`${JSON.stringify(results.map((r) => jsonResult(r.request, r.ev, trace)), null, 2)}\n`);
  } else {
    for (const r of results) io.out(textResult(r.request, r.ev, trace, names));
  }
  return 0;
}

/** The rules that matched and did something (everything but not-matched/disabled/skipped/invalid). */
function matchedEntries(ev: Evaluation): TraceEntry[] {
  return ev.trace.filter((t) => t.matched === true && t.outcome !== 'not-matched' && t.outcome !== 'skipped' && t.outcome !== 'below-threshold');
}

function jsonResult(r: LoadedRequest, ev: Evaluation, trace: boolean) {
  return {
    request: { index: r.index + 1, ...(r.name ? { name: r.name } : {}), ...(r.line !== undefined ? { line: r.line } : {}) },
    decision: ev.decision,
    matched: matchedEntries(ev).map((t) => ({
      phase: t.phase,
      ...(t.rulesetId ? { rulesetId: t.rulesetId } : {}),
      ...(t.ruleId ? { ruleId: t.ruleId } : {}),
      ...(t.ref ? { ref: t.ref } : {}),
      ...(t.description ? { description: t.description } : {}),
      action: t.action,
      outcome: t.outcome,
      ...(t.scoreAdded !== undefined ? { scoreAdded: t.scoreAdded } : {}),
    })),
    scores: ev.scores,
    logs: ev.logs,
    ...(Object.keys(ev.skippedProducts).length ? { skippedProducts: ev.skippedProducts } : {}),
    ...(ev.validation ? { validation: ev.validation } : {}),
    ...(trace ? { trace: ev.trace } : {}),
  };
}

const short = (id: string | undefined) => (id === undefined ? '' : id.length === 32 ? `${id.slice(0, 8)}…` : id);

/** A rule by every handle it has (ref, id, description), for a line a person may search with. */
function ruleLabel(t: RuleNaming): string {
  return describeRule(t, 'full') ?? '(unnamed rule)';
}

function textResult(r: LoadedRequest, ev: Evaluation, trace: boolean, names: Map<string, string>): string {
  const head = `#${r.index + 1}${r.name ? ` ${r.name}` : ''}${r.line !== undefined ? ` (line ${r.line})` : ''}`;
  const d = ev.decision;
  const lines = [`${head}: ${d.action}`];
  if (d.action !== 'allow-through') {
    const score = d.score !== undefined ? ` — score ${d.score} >= ${d.threshold}` : '';
    const where = `${d.phase}${d.rulesetId ? `, ruleset ${names.get(d.rulesetId) ?? short(d.rulesetId)}` : ''}`;
    lines.push(`  decided by: ${ruleLabel(d)} [${where}]${score}`);
    if (d.response) lines.push(`  response: ${d.response.status_code} ${d.response.content_type}`);
  }
  const matched = matchedEntries(ev);
  if (matched.length > 0) {
    lines.push('  matched:');
    for (const t of matched) lines.push(`    ${entryText(t)}`);
  }
  for (const [id, total] of Object.entries(ev.scores)) lines.push(`  anomaly score: ${total} (${names.get(id) ?? short(id)})`);
  if (ev.validation) lines.push(`  validation mode: the new managed rules would ${ev.validation.newDecision.action === 'allow-through' ? 'let it through' : `${ev.validation.newDecision.action} (${ruleLabel(ev.validation.newDecision)})`}`);
  if (trace) {
    lines.push('  trace:');
    for (const t of ev.trace) lines.push(`    ${'  '.repeat(t.depth)}${traceText(t, names)}`);
  }
  return `${lines.join('\n')}\n`;
}

function entryText(t: TraceEntry): string {
  const score = t.scoreAdded !== undefined ? ` +${t.scoreAdded}` : '';
  return `${ruleLabel(t)}: ${t.action}${t.outcome !== actionOutcome(t.action) ? ` (${t.outcome})` : ''}${score}`;
}

function actionOutcome(action: string | undefined): string {
  switch (action) {
    case 'log':
      return 'logged';
    case 'score':
      return 'scored';
    case 'execute':
      return 'executed';
    case 'skip':
      return 'skip';
    default:
      return 'terminated';
  }
}

function traceText(t: TraceEntry, names: Map<string, string>): string {
  const where = `[${t.phase}${t.rulesetId ? ` ${names.get(t.rulesetId) ?? short(t.rulesetId)}` : ''}]`;
  const what = describeRule(t, 'full') ?? '(whole phase)';
  const bits = [`${t.outcome}`];
  if (t.action) bits.push(`action ${t.action}`);
  if (!t.enabled && t.outcome !== 'disabled') bits.push('disabled');
  if (t.scoreAdded !== undefined) bits.push(`+${t.scoreAdded} = ${t.score}`);
  else if (t.threshold !== undefined) bits.push(`score ${t.score} / threshold ${t.threshold}`);
  if (t.skippedBy) bits.push(`skipped by ${ruleLabel(t.skippedBy)}`);
  if (t.overriddenBy) bits.push(`overridden by ${t.overriddenBy.join(', ')}`);
  if (t.note) bits.push(t.note);
  return `${where} ${what}: ${bits.join('; ')}`;
}
