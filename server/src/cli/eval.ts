/**
 * `rulesmith eval`: two modes.
 *
 *   eval --expr 'EXPRESSION' --fields FIELDS.json [--format text|json]
 *     evaluates one expression against field values given as JSON.
 *
 *   eval --config ENTRY.ruleset.json [--custom CUSTOM.ruleset.json ...] --requests FILE
 *        [--format text|json] [--trace] [--plan PLAN]
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
 * an array of objects).
 *
 * Exit status: 0 when every request was evaluated (whatever the verdicts), 2 for bad usage
 * or input that cannot be used: an unreadable file, invalid JSON, a configuration with
 * errors (which file, which rule), a malformed request (which file, which request).
 */
import { parseArgs } from 'node:util';
import { compileExpression, prepareFields } from '../language/index';
import type { FieldValues } from '../language/evaluate';
import { engineReport, positionAt } from '../language/report';
import { PHASES, PLANS, type Phase, type Plan } from '../language/scheme/types';
import { defaultCatalog } from '../managed/catalog';
import type { ManagedCatalog } from '../managed/types';
import { parseFtwFile } from '../requests/ftw';
import { requestFields } from '../requests/fields';
import { parseHttpFile } from '../requests/http';
import type { SampleRequest } from '../requests/types';
import { compileZone, type CompiledZone, type EngineProblem, type Evaluation, type TraceEntry, type ZoneConfig } from '../rulesets/engine';
import type { LegacyConfig } from '../rulesets/legacy';
import type { Rule, Ruleset } from '../rulesets/model';
import { validateRulesetJson } from '../rulesets/validate';
import { checkOptions, outputFormat } from './check';
import { UsageError, type Io, type Parsed } from './main';

/** Entry of the `eval` command: parses its own arguments (`--custom` may repeat). */
export function runEvalCommand(args: readonly string[], io: Io): number {
  const p = parseOwn(args, {
    expr: { type: 'string' },
    fields: { type: 'string' },
    format: { type: 'string' },
    phase: { type: 'string' },
    plan: { type: 'string' },
    config: { type: 'string', multiple: true },
    custom: { type: 'string', multiple: true },
    requests: { type: 'string' },
    trace: { type: 'boolean' },
  });
  if (p.values.config !== undefined) {
    if (p.values.expr !== undefined || p.values.fields !== undefined) throw new UsageError('give either --config with --requests, or --expr with --fields');
    return runEvalConfig(p, io);
  }
  for (const k of ['custom', 'requests', 'trace'] as const) {
    if (p.values[k] !== undefined) throw new UsageError(`--${k} goes with --config`);
  }
  return runEval({ values: p.values as Parsed['values'], files: p.files }, io);
}

type OwnValues = Record<string, string | boolean | string[] | undefined>;

export function parseOwn(args: readonly string[], options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>): { values: OwnValues; files: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
    return { values: values as OwnValues, files: positionals };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export function runEval(p: Parsed, io: Io): number {
  const format = outputFormat(p.values);
  const options = checkOptions(p.values);
  const expr = p.values.expr as string | undefined;
  const fieldsFile = p.values.fields as string | undefined;
  if (expr === undefined) throw new UsageError('eval needs --expr (or --config with --requests)');
  if (fieldsFile === undefined) throw new UsageError('eval needs --fields FILE.json (use "{}" in a file for no fields)');
  if (p.files.length > 0) throw new UsageError(`unexpected argument "${p.files[0]}"`);

  let input: unknown;
  try {
    input = JSON.parse(fieldsFile === '-' ? io.readStdin() : io.readFile(fieldsFile));
  } catch (e) {
    const reason = e instanceof SyntaxError ? `invalid JSON: ${e.message}` : ((e as NodeJS.ErrnoException).code ?? (e as Error).message);
    throw new UsageError(`cannot read field values from ${fieldsFile}: ${reason}`);
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new UsageError(`${fieldsFile} must hold a JSON object of field values, e.g. {"http.host": "example.com"}`);
  }

  const { filter, diagnostics } = compileExpression(expr, options);
  const { values, errors } = prepareFields(input as Record<string, unknown>);
  const exprErrors = diagnostics.filter((d) => d.severity === 'error');
  if (!filter || errors.length > 0) {
    if (format === 'json') {
      io.out(`${JSON.stringify({ matched: null, diagnostics: exprErrors, fieldErrors: errors }, null, 2)}\n`);
    } else {
      for (const d of exprErrors) io.err(`${engineReport(expr, d)}${d.hint ? `hint: ${d.hint}\n` : ''}`);
      for (const e of errors) io.err(`${fieldsFile}: ${e.field}: ${e.message}\n`);
    }
    return 2;
  }
  const matched = filter.matches(values);
  io.out(format === 'json' ? `${JSON.stringify({ matched })}\n` : `${matched}\n`);
  return 0;
}

// --- Input: the zone ---------------------------------------------------------------------

/** Input that cannot be used: reported with exit status 2, without the usage text. */
export class InputError extends Error {
  constructor(readonly lines: readonly string[]) {
    super(lines.join('\n'));
  }
}

function readText(io: Io, file: string, what: string): string {
  try {
    return io.readFile(file);
  } catch (e) {
    throw new InputError([`rulesmith: cannot read ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`]);
  }
}

function readJson(io: Io, file: string, what: string): { text: string; value: unknown } {
  const text = readText(io, file, what);
  try {
    return { text, value: JSON.parse(text) };
  } catch (e) {
    throw new InputError([`rulesmith: ${file}: invalid JSON: ${(e as Error).message}`]);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPhase = (k: string): k is Phase => (PHASES as readonly string[]).includes(k);

/** A ruleset object from a body or an API response (`{"result": {...}}`). */
function unwrap(v: unknown): unknown {
  return isObject(v) && isObject(v.result) && !('rules' in v) ? v.result : v;
}

export interface LoadedZone {
  readonly zone: ZoneConfig;
  /** Files whose whole text is one ruleset (validated with the ruleset validator). */
  readonly rulesetFiles: readonly { file: string; text: string; phase?: Phase }[];
  readonly files: { readonly config: readonly string[]; readonly custom: readonly string[] };
}

/**
 * Reads the zone from one or more `--config` files (each of the three shapes; entry points
 * merge, and a phase given twice is an error) and the `--custom` files.
 */
export function loadZone(io: Io, configFiles: readonly string[], customFiles: readonly string[], plan: Plan | undefined, catalog: ManagedCatalog = defaultCatalog): LoadedZone {
  const parts = configFiles.map((f) => loadConfigFile(io, f, plan));
  const entryPoints: Partial<Record<Phase, Ruleset>> = {};
  const from = new Map<Phase, string>();
  for (const [i, part] of parts.entries()) {
    for (const [phase, rs] of Object.entries(part.entryPoints) as [Phase, Ruleset][]) {
      if (from.has(phase)) throw new InputError([`rulesmith: ${configFiles[i]}: a ${phase} entry point is already given by ${from.get(phase)}`]);
      from.set(phase, configFiles[i]);
      entryPoints[phase] = rs;
    }
  }
  const customRulesets: Ruleset[] = parts.flatMap((p) => p.customRulesets);
  const rulesetFiles = parts.flatMap((p) => p.rulesetFiles);
  const legacy = parts.find((p) => p.legacy)?.legacy;
  const zonePlan = plan ?? parts.find((p) => p.plan)?.plan;
  for (const file of customFiles) {
    const { text: ctext, value } = readJson(io, file, 'custom ruleset');
    const list = Array.isArray(value) ? value.map(unwrap) : [unwrap(value)];
    for (const [i, r] of list.entries()) {
      const where = list.length > 1 ? `${file}: ruleset ${i + 1}` : file;
      if (!isObject(r) || !Array.isArray(r.rules)) throw new InputError([`rulesmith: ${where}: expected a custom ruleset with "id" and "rules"`]);
      if (typeof r.id !== 'string' || r.id === '') throw new InputError([`rulesmith: ${where}: the custom ruleset has no "id": execute rules find it by id`]);
      customRulesets.push(r as Ruleset);
    }
    if (!Array.isArray(value)) rulesetFiles.push({ file, text: ctext, phase: (unwrap(value) as Ruleset).phase });
  }
  return { zone: { entryPoints, customRulesets, catalog, legacy, plan: zonePlan }, rulesetFiles, files: { config: configFiles, custom: customFiles } };
}

interface ConfigPart {
  readonly entryPoints: Partial<Record<Phase, Ruleset>>;
  readonly customRulesets: Ruleset[];
  readonly rulesetFiles: { file: string; text: string; phase?: Phase }[];
  readonly legacy?: LegacyConfig;
  readonly plan?: Plan;
}

function loadConfigFile(io: Io, configFile: string, plan: Plan | undefined): ConfigPart {
  const { text, value: raw } = readJson(io, configFile, 'configuration');
  const v = unwrap(raw);
  const bad = (msg: string): never => {
    throw new InputError([`rulesmith: ${configFile}: ${msg}`]);
  };
  if (!isObject(v)) bad('expected a ruleset object, an object mapping phases to entry points, or a zone object with "entryPoints"');
  const obj = v as Record<string, unknown>;
  const entryPoints: Partial<Record<Phase, Ruleset>> = {};
  const rulesetFiles: { file: string; text: string; phase?: Phase }[] = [];
  let customRulesets: Ruleset[] = [];
  let legacy: LegacyConfig | undefined;
  let zonePlan = plan;

  const asRuleset = (x: unknown, phase: Phase, where: string): Ruleset => {
    const r = unwrap(x);
    if (Array.isArray(r)) return { phase, rules: r as Rule[] };
    if (!isObject(r) || (r.rules !== undefined && !Array.isArray(r.rules))) bad(`${where}: expected a ruleset object with "rules" (or an array of rules)`);
    const rs = r as Ruleset;
    if (rs.phase !== undefined && rs.phase !== phase) bad(`${where}: the ruleset's phase is ${rs.phase}, but it is given for ${phase}`);
    return { ...rs, phase };
  };
  const phaseMap = (m: Record<string, unknown>, where: string) => {
    for (const [k, x] of Object.entries(m)) {
      if (!isPhase(k)) bad(`${where}"${k}" is not a phase (e.g. http_request_firewall_custom, http_request_firewall_managed)`);
      entryPoints[k as Phase] = asRuleset(x, k as Phase, `${where}${k}`);
    }
  };

  if ('entryPoints' in obj) {
    if (!isObject(obj.entryPoints)) bad('"entryPoints" must map phases to entry-point rulesets');
    phaseMap(obj.entryPoints as Record<string, unknown>, 'entryPoints.');
    if (obj.customRulesets !== undefined) {
      if (!Array.isArray(obj.customRulesets)) bad('"customRulesets" must be an array of rulesets');
      customRulesets = (obj.customRulesets as unknown[]).map((x) => unwrap(x) as Ruleset);
    }
    if (obj.legacy !== undefined) {
      const l = obj.legacy;
      if (!isObject(l) || !Array.isArray(l.firewallRules)) bad('"legacy" must be {"firewallRules": [...], "migrated": false}');
      legacy = { firewallRules: (l as Record<string, unknown>).firewallRules as LegacyConfig['firewallRules'], migrated: (l as Record<string, unknown>).migrated === true, validationMode: (l as Record<string, unknown>).validationMode === true };
    }
    if (obj.plan !== undefined && zonePlan === undefined) {
      if (typeof obj.plan !== 'string' || !PLANS.includes(obj.plan as Plan)) bad(`"plan" must be one of ${PLANS.join(', ')}`);
      zonePlan = obj.plan as Plan;
    }
  } else if ('rules' in obj || 'phase' in obj) {
    if (obj.kind === 'custom') bad('this is a custom ruleset (kind "custom"): pass it with --custom, and run it from an entry point with an execute rule');
    if (obj.kind === 'managed') bad('this is a managed ruleset: deploy it from an entry point with an execute rule');
    if (typeof obj.phase !== 'string') bad('the ruleset has no "phase": say where it runs (e.g. "phase": "http_request_firewall_custom"), or map phases to entry points');
    if (!isPhase(obj.phase as string)) bad(`"${String(obj.phase)}" is not a phase`);
    entryPoints[obj.phase as Phase] = asRuleset(obj, obj.phase as Phase, 'ruleset');
    rulesetFiles.push({ file: configFile, text, phase: obj.phase as Phase });
  } else {
    phaseMap(obj, '');
    if (Object.keys(entryPoints).length === 0) bad('no entry point: the object is empty');
  }

  return { entryPoints, customRulesets, rulesetFiles, legacy, plan: zonePlan };
}

/** Compiles the zone; errors (validator's and engine's) become an InputError naming file and rule. */
export function compileLoadedZone(loaded: LoadedZone, io: Io): CompiledZone {
  const lines: string[] = [];
  const customIds = (loaded.zone.customRulesets ?? []).map((r) => r.id).filter((x): x is string => typeof x === 'string');
  // Files that are one ruleset go through the ruleset validator (positions in the file);
  // the engine's own problems cover the rest (phase maps, zone files) and what the
  // validator does not check. When the validator found errors in a file, the engine's
  // problems about the same ruleset would repeat them, so they are left out.
  const validatedPhases = new Set<string>();
  const validatedCustom = new Set<string>();
  for (const f of loaded.rulesetFiles) {
    const problems = validateRulesetJson(f.text, { catalog: loaded.zone.catalog, plan: loaded.zone.plan, phase: f.phase, customRulesetIds: customIds });
    const errors = problems.filter((p) => p.severity === 'error');
    for (const p of errors) {
      const pos = positionAt(f.text, p.start);
      lines.push(`${f.file}:${pos.line + 1}:${pos.character + 1}: error[${p.code}]${p.rule !== undefined ? ` (rule ${p.rule + 1}${ruleName(f.text, p.rule)})` : ''}: ${p.message}`);
    }
    if (errors.length === 0) continue;
    if (loaded.files.custom.includes(f.file)) {
      const id = (unwrap(JSON.parse(f.text)) as Ruleset).id;
      if (id) validatedCustom.add(id);
    } else if (f.phase) validatedPhases.add(f.phase);
  }
  const compiled = compileZone(loaded.zone);
  for (const p of compiled.problems) {
    const isCustom = p.rulesetId !== undefined && customIds.includes(p.rulesetId);
    if (isCustom ? validatedCustom.has(p.rulesetId!) : validatedPhases.has(p.stage)) continue;
    const line = `${problemWhere(p, loaded)}: ${p.severity}: ${p.message}`;
    if (p.severity === 'error') lines.push(line);
    else io.err(`${line}\n`);
  }
  if (lines.length > 0) throw new InputError([...new Set(lines)]);
  return compiled;
}

/** ` "ref"` of rule `index` of a ruleset file, for messages. */
function ruleName(text: string, index: number): string {
  try {
    const r = (unwrap(JSON.parse(text)) as Ruleset).rules?.[index];
    const name = r?.ref || r?.id;
    return name ? ` "${name}"` : '';
  } catch {
    return '';
  }
}

function problemWhere(p: EngineProblem, loaded: LoadedZone): string {
  const custom = p.rulesetId !== undefined && (loaded.zone.customRulesets ?? []).some((r) => r.id === p.rulesetId);
  if (custom) {
    const file = loaded.files.custom.find((f) => loaded.rulesetFiles.some((r) => r.file === f && r.text.includes(p.rulesetId!)));
    return `${file ?? loaded.files.config.join(', ')} (custom ruleset ${p.rulesetId})`;
  }
  const owner = loaded.rulesetFiles.find((f) => f.phase === p.stage && loaded.files.config.includes(f.file))?.file;
  return `${owner ?? loaded.files.config.join(', ')} (${p.stage})`;
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

/** Reads one requests file; malformed requests become an InputError naming file and request. */
export function loadRequests(io: Io, file: string, text = readText(io, file, 'requests file')): LoadedRequest[] {
  const problems: string[] = [];
  const out: LoadedRequest[] = [];
  const fromSample = (req: SampleRequest, name: string | undefined, line: number | undefined) => {
    const index = out.length;
    const label = `${file}: request ${index + 1}${name ? ` "${name}"` : ''}${line !== undefined ? ` (line ${line})` : ''}`;
    const f = requestFields(req);
    for (const p of f.problems) problems.push(`${label}: ${p}`);
    const { values, errors } = prepareFields(f.fields);
    for (const e of errors) problems.push(`${label}: ${e.field}: ${e.message}`);
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

function runEvalConfig(p: { values: OwnValues; files: string[] }, io: Io): number {
  const values = p.values as Parsed['values'];
  const format = outputFormat(values);
  const plan = checkOptions(values).plan;
  if (p.values.phase !== undefined) throw new UsageError('--phase does not go with --config: each entry point says its phase');
  const config = p.values.config as string[];
  const requestsFile = p.values.requests as string | undefined;
  if (requestsFile === undefined) throw new UsageError('eval --config needs --requests FILE (.http, ftw .yaml, or .json field values)');
  if (p.files.length > 0) throw new UsageError(`unexpected argument "${p.files[0]}"`);
  const trace = p.values.trace === true;
  try {
    const loaded = loadZone(io, config, (p.values.custom as string[] | undefined) ?? [], plan);
    const zone = compileLoadedZone(loaded, io);
    const requests = loadRequests(io, requestsFile);
    const results = requests.map((r) => ({ request: r, ev: zone.evaluate(r.fields) }));
    const names = rulesetNames(loaded.zone);
    if (format === 'json') {
      io.out(`${JSON.stringify(results.map((r) => jsonResult(r.request, r.ev, trace)), null, 2)}\n`);
    } else {
      for (const r of results) io.out(textResult(r.request, r.ev, trace, names));
    }
    return 0;
  } catch (e) {
    if (e instanceof InputError) {
      for (const l of e.lines) io.err(`${l}\n`);
      return 2;
    }
    throw e;
  }
}

function rulesetNames(zone: ZoneConfig): Map<string, string> {
  const m = new Map<string, string>();
  for (const r of zone.catalog.rulesets) m.set(r.id, r.name);
  for (const r of zone.customRulesets ?? []) if (r.id && r.name) m.set(r.id, r.name);
  return m;
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

export function ruleLabel(t: { ruleId?: string; ref?: string; description?: string }): string {
  const parts: string[] = [];
  if (t.ref && t.ref !== t.ruleId) parts.push(t.ref);
  if (t.ruleId) parts.push(`id ${t.ruleId}`);
  if (t.description) parts.push(`"${t.description}"`);
  return parts.join(' ') || '(unnamed rule)';
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
  const what = t.ruleId || t.ref || t.description ? ruleLabel(t) : '(whole phase)';
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
