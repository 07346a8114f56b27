/**
 * Settings, read per document from the client with `workspace/configuration`
 * (scopeUri = the document, section `rulesmith`), so that a folder or a language
 * override applies to the files it covers. Nothing here is a server global: the only
 * state is a cache of what the client answered, per URI, dropped on
 * `workspace/didChangeConfiguration` (the client then gets asked again).
 */
import { PHASES, PLANS, type Phase, type Plan } from '../language/scheme/types';
import { DEFAULT_BODY_LIMIT, MAX_BODY_LIMIT } from '../requests/body';

export type Notation = 'preserve' | 'english' | 'c-like';

/** The `rulesmith.*` settings the server uses, validated, with the manifest's defaults. */
export interface Settings {
  readonly plan?: Plan;
  /** The phase assumed for `.cfrule` files and for ruleset JSON without a `phase`. */
  readonly phase?: Phase;
  /** Extra globs of JSON files that are rulesets, besides `*.ruleset.json`. */
  readonly rulesetFiles: readonly string[];
  readonly dynamicComparisons: boolean;
  readonly format: { readonly notation: Notation; readonly width: number };
  /**
   * `rulesmith.evaluation.ruleset`: the ruleset a `.http` file's requests are evaluated
   * against (a path, relative to the workspace folder); absent: the nearest `*.ruleset.json`.
   */
  readonly evaluationRuleset?: string;
  /**
   * `rulesmith.evaluation.bodyLimit`: how many bytes of each request's body become field
   * values in Evaluate (the inspection limit, requests/body.ts); absent: 128 KiB.
   */
  readonly evaluationBodyLimit?: number;
}

export const DEFAULT_SETTINGS: Settings = {
  plan: 'enterprise',
  phase: 'http_request_firewall_custom',
  rulesetFiles: [],
  dynamicComparisons: true,
  format: { notation: 'preserve', width: 100 },
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Validates what the client sent. VS Code sends the section as nested objects
 * (`{ plan, format: { width } }`); a value of the wrong type falls back to the default
 * rather than breaking every feature of the file.
 */
export function parseSettings(raw: unknown): Settings {
  const r = isRecord(raw) ? raw : {};
  const format = isRecord(r.format) ? r.format : {};
  // Flat keys (`"format.width"`) are accepted too: some clients send them unexpanded.
  const pick = (nested: unknown, flat: unknown) => (nested !== undefined ? nested : flat);
  const plan = r.plan;
  const phase = r.phase;
  const notation = pick(format.notation, r['format.notation']);
  const width = pick(format.width, r['format.width']);
  const globs = r.rulesetFiles;
  const evaluation = isRecord(r.evaluation) ? r.evaluation : {};
  const ruleset = pick(evaluation.ruleset, r['evaluation.ruleset']);
  const bodyLimit = pick(evaluation.bodyLimit, r['evaluation.bodyLimit']);
  return {
    plan: typeof plan === 'string' && (PLANS as readonly string[]).includes(plan) ? (plan as Plan) : DEFAULT_SETTINGS.plan,
    phase: typeof phase === 'string' && (PHASES as readonly string[]).includes(phase) ? (phase as Phase) : phase === '' ? undefined : DEFAULT_SETTINGS.phase,
    rulesetFiles: Array.isArray(globs) ? globs.filter((g): g is string => typeof g === 'string' && g !== '') : DEFAULT_SETTINGS.rulesetFiles,
    dynamicComparisons: typeof r.dynamicComparisons === 'boolean' ? r.dynamicComparisons : DEFAULT_SETTINGS.dynamicComparisons,
    format: {
      notation: notation === 'english' || notation === 'c-like' || notation === 'preserve' ? notation : DEFAULT_SETTINGS.format.notation,
      width: typeof width === 'number' && Number.isFinite(width) && width >= 20 ? Math.floor(width) : DEFAULT_SETTINGS.format.width,
    },
    // Only when set, so that settings without it compare equal to the defaults.
    ...(typeof ruleset === 'string' && ruleset.trim() !== '' ? { evaluationRuleset: ruleset.trim() } : {}),
    ...(typeof bodyLimit === 'number' && Number.isInteger(bodyLimit) && bodyLimit >= 0 && bodyLimit <= MAX_BODY_LIMIT && bodyLimit !== DEFAULT_BODY_LIMIT ? { evaluationBodyLimit: bodyLimit } : {}),
  };
}

/** A phase name as written in a ruleset, if it is one the scheme knows. */
export function asPhase(phase: string | undefined): Phase | undefined {
  return phase !== undefined && (PHASES as readonly string[]).includes(phase) ? (phase as Phase) : undefined;
}

/**
 * The per-document settings cache. `fetch` asks the client (or returns `undefined`
 * when the client cannot answer `workspace/configuration`, in which case the defaults
 * apply). Concurrent requests for one URI share one round trip.
 */
export class SettingsCache {
  private readonly cache = new Map<string, Promise<Settings>>();

  constructor(private readonly fetch: (uri: string) => Promise<unknown>) {}

  get(uri: string): Promise<Settings> {
    let s = this.cache.get(uri);
    if (!s) {
      s = this.fetch(uri).then(parseSettings, () => DEFAULT_SETTINGS);
      this.cache.set(uri, s);
    }
    return s;
  }

  /** Forgets one document's settings (it was closed). */
  delete(uri: string): void {
    this.cache.delete(uri);
  }

  /** Forgets everything: the configuration changed. */
  clear(): void {
    this.cache.clear();
  }
}

/**
 * True when a path matches a glob from `rulesmith.rulesetFiles`. Patterns follow VS
 * Code's `files.associations` habit: a pattern without `/` matches the file name
 * (`*.rules.json`); one with `/` matches the end of the path (`rulesets/*.json`,
 * `**\/waf/*.json`). Supported: `*`, `**`, `?`, `{a,b}`, `[abc]`.
 */
export function matchesGlob(path: string, glob: string): boolean {
  const target = glob.includes('/') ? path : path.slice(path.lastIndexOf('/') + 1);
  return globRegExp(glob.replace(/^\.\//, '')).test(target);
}

const globCache = new Map<string, RegExp>();

function globRegExp(glob: string): RegExp {
  let re = globCache.get(glob);
  if (re) return re;
  let src = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') {
      if (glob[i + 1] === '*') {
        // `**/` matches any number of folders (also none); a trailing `**` anything.
        if (glob[i + 2] === '/') {
          src += '(?:[^/]*/)*';
          i += 2;
        } else {
          src += '.*';
          i += 1;
        }
      } else src += '[^/]*';
    } else if (c === '?') src += '[^/]';
    else if (c === '{') {
      braces++;
      src += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      src += ')';
    } else if (c === ',' && braces > 0) src += '|';
    else if (c === '[') {
      const close = glob.indexOf(']', i + 1);
      if (close < 0) src += '\\[';
      else {
        src += `[${glob.slice(i + 1, close).replace(/^!/, '^').replace(/\\/g, '\\\\')}]`;
        i = close;
      }
    } else src += c.replace(/[.+^$()|\\/]/g, (m) => `\\${m}`);
  }
  re = new RegExp(glob.startsWith('/') || glob.startsWith('**') ? `^${src}$` : `(?:^|/)${src}$`);
  globCache.set(glob, re);
  return re;
}
