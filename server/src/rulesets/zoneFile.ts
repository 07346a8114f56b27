/**
 * A zone's WAF configuration from the JSON files that describe it, shared by the CLI
 * (`rulesmith eval --config`, `preview`) and the editor's "Evaluate" (lsp/evaluate.ts).
 *
 * Pure: the caller reads the files; `read(file)` hands their text in (it may throw, and
 * the caller's error goes through unchanged). Problems with the files' content throw a
 * `ZoneFileError` whose message names the file (`zone.json: "plan" must be one of …`).
 *
 * A configuration file has one of three shapes:
 *   1. one entry-point ruleset: `{"phase": "http_request_firewall_managed", "rules": [...]}`
 *      (or an API response, `{"result": {...}}`); its `phase` says where it runs;
 *   2. an object mapping phases to entry points:
 *      `{"http_request_firewall_custom": {"rules": [...]}, "http_request_firewall_managed": {...}}`
 *      (a value may also be a bare array of rules);
 *   3. a whole zone: `{"entryPoints": {...as 2...}, "customRulesets": [...], "plan": "pro",
 *      "legacy": {"firewallRules": [...], "migrated": false, "validationMode": false}}`.
 * Custom ruleset files hold a custom ruleset with its `id` (or an API response, or an array
 * of rulesets); `execute` rules run them by id. Managed rulesets come from the catalog.
 */
import { PHASES, PLANS, type Phase, type Plan } from '../language/scheme/types';
import { positionAt, withSubject } from '../language/report';
import type { ManagedCatalog } from './catalog';
import { compileZone, type CompiledZone, type EngineProblem, type ZoneConfig } from './engine';
import type { LegacyConfig } from './legacy';
import type { Rule, Ruleset } from './model';
import { validateRulesetJson } from './validate';

/** Content that cannot be used; the message starts with the file name. */
export class ZoneFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ZoneFileError';
  }
}

/** A file whose whole text is one ruleset (checked with the ruleset validator). */
export interface RulesetFile {
  readonly file: string;
  readonly text: string;
  readonly phase?: Phase;
}

export interface LoadedZone {
  readonly zone: ZoneConfig;
  readonly rulesetFiles: readonly RulesetFile[];
  readonly files: { readonly config: readonly string[]; readonly custom: readonly string[] };
}

export interface LoadZoneOptions {
  /** The zone's plan; a zone file's own `plan` applies when this is not given. */
  readonly plan?: Plan;
  /** The managed rulesets `execute` rules deploy (the adapters pass managed/'s built-in one). */
  readonly catalog: ManagedCatalog;
}

/** Which file is read, for the caller's messages. */
export type ZoneFileRole = 'configuration' | 'custom ruleset';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isPhase = (k: string): k is Phase => (PHASES as readonly string[]).includes(k);

/** A ruleset object from a body or an API response (`{"result": {...}}`). */
export function unwrapRuleset(v: unknown): unknown {
  return isObject(v) && isObject(v.result) && !('rules' in v) ? v.result : v;
}

function parseJson(file: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ZoneFileError(`${file}: invalid JSON: ${(e as Error).message}`);
  }
}

/**
 * Reads the zone from configuration files (each of the three shapes; entry points merge,
 * and a phase given twice is an error) and custom ruleset files, in the order given.
 */
export function loadZoneFiles(
  configFiles: readonly string[],
  customFiles: readonly string[],
  read: (file: string, role: ZoneFileRole) => string,
  options: LoadZoneOptions,
): LoadedZone {
  const catalog = options.catalog;
  const parts = configFiles.map((f) => loadConfigFile(f, read(f, 'configuration'), options.plan));
  const entryPoints: Partial<Record<Phase, Ruleset>> = {};
  const from = new Map<Phase, string>();
  for (const [i, part] of parts.entries()) {
    for (const [phase, rs] of Object.entries(part.entryPoints) as [Phase, Ruleset][]) {
      if (from.has(phase)) throw new ZoneFileError(`${configFiles[i]}: a ${phase} entry point is already given by ${from.get(phase)}`);
      from.set(phase, configFiles[i]);
      entryPoints[phase] = rs;
    }
  }
  const customRulesets: Ruleset[] = parts.flatMap((p) => p.customRulesets);
  const rulesetFiles = parts.flatMap((p) => p.rulesetFiles);
  const legacy = parts.find((p) => p.legacy)?.legacy;
  const zonePlan = options.plan ?? parts.find((p) => p.plan)?.plan;
  for (const file of customFiles) {
    const ctext = read(file, 'custom ruleset');
    const value = parseJson(file, ctext);
    const list = Array.isArray(value) ? value.map(unwrapRuleset) : [unwrapRuleset(value)];
    for (const [i, r] of list.entries()) {
      const where = list.length > 1 ? `${file}: ruleset ${i + 1}` : file;
      if (!isObject(r) || !Array.isArray(r.rules)) throw new ZoneFileError(`${where}: expected a custom ruleset with "id" and "rules"`);
      if (typeof r.id !== 'string' || r.id === '') throw new ZoneFileError(`${where}: the custom ruleset has no "id": execute rules find it by id`);
      customRulesets.push(r as Ruleset);
    }
    if (!Array.isArray(value)) rulesetFiles.push({ file, text: ctext, phase: (unwrapRuleset(value) as Ruleset).phase });
  }
  return { zone: { entryPoints, customRulesets, catalog, legacy, plan: zonePlan }, rulesetFiles, files: { config: configFiles, custom: customFiles } };
}

interface ConfigPart {
  readonly entryPoints: Partial<Record<Phase, Ruleset>>;
  readonly customRulesets: Ruleset[];
  readonly rulesetFiles: RulesetFile[];
  readonly legacy?: LegacyConfig;
  readonly plan?: Plan;
}

function loadConfigFile(configFile: string, text: string, plan: Plan | undefined): ConfigPart {
  const v = unwrapRuleset(parseJson(configFile, text));
  const bad = (msg: string): never => {
    throw new ZoneFileError(`${configFile}: ${msg}`);
  };
  if (!isObject(v)) bad('expected a ruleset object, an object mapping phases to entry points, or a zone object with "entryPoints"');
  const obj = v as Record<string, unknown>;
  const entryPoints: Partial<Record<Phase, Ruleset>> = {};
  const rulesetFiles: RulesetFile[] = [];
  let customRulesets: Ruleset[] = [];
  let legacy: LegacyConfig | undefined;
  let zonePlan = plan;

  const asRuleset = (x: unknown, phase: Phase, where: string): Ruleset => {
    const r = unwrapRuleset(x);
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
      customRulesets = (obj.customRulesets as unknown[]).map((x) => unwrapRuleset(x) as Ruleset);
    }
    if (obj.legacy !== undefined) {
      const l = obj.legacy;
      if (!isObject(l) || !Array.isArray(l.firewallRules)) bad('"legacy" must be {"firewallRules": [...], "migrated": false}');
      const lo = l as Record<string, unknown>;
      legacy = { firewallRules: lo.firewallRules as LegacyConfig['firewallRules'], migrated: lo.migrated === true, validationMode: lo.validationMode === true };
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

/** One problem of a zone, formatted for people (`file:line:col: error[code] (rule 2 "ref"): …`). */
export interface ZoneIssue {
  readonly message: string;
  readonly file?: string;
  /** 0-based position in `file`, for validator problems. */
  readonly line?: number;
  readonly character?: number;
}

export interface CheckedZone {
  readonly compiled: CompiledZone;
  /** Errors, deduplicated: a zone with any cannot be trusted to evaluate as deployed. */
  readonly errors: readonly ZoneIssue[];
  readonly warnings: readonly ZoneIssue[];
}

/**
 * Validates the ruleset files (positions in the file) and compiles the zone; the engine's
 * problems cover the rest (phase maps, zone files) and what the validator does not check.
 * When the validator found errors in a file, the engine's problems about the same ruleset
 * would repeat them, so they are left out.
 */
export function checkZone(loaded: LoadedZone): CheckedZone {
  const errors: ZoneIssue[] = [];
  const warnings: ZoneIssue[] = [];
  const seen = new Set<string>();
  const addError = (issue: ZoneIssue) => {
    if (seen.has(issue.message)) return;
    seen.add(issue.message);
    errors.push(issue);
  };
  const customIds = (loaded.zone.customRulesets ?? []).map((r) => r.id).filter((x): x is string => typeof x === 'string');
  const validatedPhases = new Set<string>();
  const validatedCustom = new Set<string>();
  for (const f of loaded.rulesetFiles) {
    const problems = validateRulesetJson(f.text, { catalog: loaded.zone.catalog, plan: loaded.zone.plan, phase: f.phase, customRulesetIds: customIds });
    const fileErrors = problems.filter((p) => p.severity === 'error');
    for (const p of fileErrors) {
      const pos = positionAt(f.text, p.start);
      const rule = p.rule !== undefined ? ` (rule ${p.rule + 1}${ruleName(f.text, p.rule)})` : '';
      // What the finding is about, for one inside an expression (`unknown identifier` alone does not say which), and the hint.
      const message = p.expression ? withSubject(p.message, f.text, p.start, p.end) : p.message;
      const hint = p.hint ? `\nhint: ${p.hint}` : '';
      addError({ message: `${f.file}:${pos.line + 1}:${pos.character + 1}: error[${p.code}]${rule}: ${message}${hint}`, file: f.file, line: pos.line, character: pos.character });
    }
    if (fileErrors.length === 0) continue;
    if (loaded.files.custom.includes(f.file)) {
      const id = (unwrapRuleset(JSON.parse(f.text)) as Ruleset).id;
      if (id) validatedCustom.add(id);
    } else if (f.phase) validatedPhases.add(f.phase);
  }
  const compiled = compileZone(loaded.zone);
  for (const p of compiled.problems) {
    const isCustom = p.rulesetId !== undefined && customIds.includes(p.rulesetId);
    if (isCustom ? validatedCustom.has(p.rulesetId!) : validatedPhases.has(p.stage)) continue;
    const where = problemWhere(p, loaded);
    const issue: ZoneIssue = { message: `${where.label}: ${p.severity}: ${p.message}`, ...(where.file ? { file: where.file } : {}) };
    if (p.severity === 'error') addError(issue);
    else warnings.push(issue);
  }
  return { compiled, errors, warnings };
}

/** ` "ref"` of rule `index` of a ruleset file, for messages. */
function ruleName(text: string, index: number): string {
  try {
    const r = (unwrapRuleset(JSON.parse(text)) as Ruleset).rules?.[index];
    const name = r?.ref || r?.id;
    return name ? ` "${name}"` : '';
  } catch {
    return '';
  }
}

function problemWhere(p: EngineProblem, loaded: LoadedZone): { label: string; file?: string } {
  const custom = p.rulesetId !== undefined && (loaded.zone.customRulesets ?? []).some((r) => r.id === p.rulesetId);
  if (custom) {
    const file = loaded.files.custom.find((f) => loaded.rulesetFiles.some((r) => r.file === f && r.text.includes(p.rulesetId!)));
    return { label: `${file ?? loaded.files.config.join(', ')} (custom ruleset ${p.rulesetId})`, file: file ?? loaded.files.config[0] };
  }
  const owner = loaded.rulesetFiles.find((f) => f.phase === p.stage && loaded.files.config.includes(f.file))?.file;
  return { label: `${owner ?? loaded.files.config.join(', ')} (${p.stage})`, file: owner ?? loaded.files.config[0] };
}

/** Ruleset names by id: the catalog's managed rulesets and the zone's custom ones. */
export function rulesetNames(zone: ZoneConfig): Map<string, string> {
  const m = new Map<string, string>();
  for (const r of zone.catalog.rulesets) m.set(r.id, r.name);
  for (const r of zone.customRulesets ?? []) if (r.id && r.name) m.set(r.id, r.name);
  return m;
}
