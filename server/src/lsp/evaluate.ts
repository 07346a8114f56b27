/**
 * "Evaluate" for `.http` files: the requests `rulesmith/httpRequests`,
 * `rulesmith/evaluateRequests` and `rulesmith/evaluationTrace` (server/src/protocol.ts).
 *
 * Which ruleset (the first that applies):
 *   1. the request's `rulesetUri`;
 *   2. the `.http` file's setting `rulesmith.evaluation.ruleset`: a path, absolute or
 *      relative to the workspace folder holding the `.http` file (`${workspaceFolder}` is
 *      expanded); without a workspace folder, relative to the `.http` file's folder;
 *   3. the nearest `*.ruleset.json`: the `.http` file's folder, then each parent up to the
 *      workspace folder's root (the filesystem's root outside a workspace).
 * A ruleset file takes the shapes of `rulesmith eval --config` (an entry-point ruleset, a
 * phase map, a zone file; rulesets/zoneFile.ts). A folder is a zone: the nearest folder
 * that holds entry points (any `*.ruleset.json` but custom and managed rulesets) gives
 * all of them, one per phase (a zone's custom rules and its managed deployment usually
 * live in two files); two for the same phase are ambiguous, and the error says to choose
 * with the setting. The setting or `rulesetUri` may name a file (that entry point only)
 * or a folder (read as the nearest one is). Custom rulesets (`"kind": "custom"` with an
 * `id`) in `*.ruleset.json` files next to the entry points are loaded too, as `--custom`
 * files, so that `execute` rules find them. The zone's plan is its own `plan`, else the
 * `.http` file's `rulesmith.plan`.
 *
 * Files are read from the editor when open there (unsaved edits count), else from disk;
 * the `.http` text comes with the request (the client does not sync `.http` files). A
 * zone is compiled once per set of file texts (a small LRU cache), so evaluating again
 * after editing a request costs only the evaluation. A ruleset with errors is not
 * evaluated (as `rulesmith eval` refuses it): the error lists the first ones.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CancellationToken, Connection } from 'vscode-languageserver/node';
import type { RequestType } from 'vscode-languageserver-protocol';
import type { FieldValues } from '../language/evaluate';
import { defaultCatalog } from '../managed/catalog';
import { requestSummary, requestValues } from '../requests/fields';
import { parseHttpFile } from '../requests/http';
import { checkZone, loadZoneFiles, rulesetNames, unwrapRuleset, ZoneFileError, type CheckedZone } from '../rulesets/zoneFile';
import {
  EvaluateRequestsRequest,
  EvaluationTraceRequest,
  HttpRequestsRequest,
  type EvaluateRequestsParams,
  type EvaluateRequestsResult,
  type EvaluationError,
  type EvaluationTraceParams,
  type EvaluationTraceResult,
  type HttpFileParams,
  type HttpRequestInfo,
  type RequestEvaluation,
} from '../protocol';
import type { DocumentStore } from './documents';
import { errorMarkdown, traceMarkdown, verdictOf } from './evaluationTrace';
import { runSafe, type Logger } from './runSafe';
import type { Settings } from './settings';

/** What the evaluation needs from the server: open documents, settings, workspace folders. */
export interface EvaluationHost {
  readonly store: DocumentStore;
  readonly getSettings: (uri: string) => Promise<Settings>;
  /** Workspace folder URIs (empty when the client cannot say). */
  readonly workspaceFolders: () => Promise<readonly string[]>;
}

/** How many compiled zones are kept (one per set of ruleset texts). */
const ZONE_CACHE_SIZE = 8;
/** How many errors an error carries. */
const MAX_DETAILS = 5;
/** The `.http` separator, as requests/http.ts reads it. */
const SEPARATOR = /^\s*#{3,}/;
const COMMENT = /^\s*(#|\/\/)/;
const RULESET_FILE = /\.ruleset\.json$/i;

/** One request block of a `.http` file, with its field values when it has no problem. */
export interface RequestBlock extends HttpRequestInfo {
  readonly fields?: Record<string, unknown>;
  readonly values?: FieldValues;
}

/**
 * The request blocks of a `.http` text: each `###`-separated block that holds a request
 * or a problem, with the parser's problems and those of its field values, by line.
 */
export function requestBlocks(text: string): RequestBlock[] {
  const { requests, problems } = parseHttpFile(text);
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  const bounds = [-1];
  lines.forEach((l, i) => {
    if (SEPARATOR.test(l)) bounds.push(i);
  });
  bounds.push(lines.length);
  const blocks: RequestBlock[] = [];
  for (let k = 0; k + 1 < bounds.length; k++) {
    const first = bounds[k] + 1;
    const last = bounds[k + 1] - 1;
    const inBlock = (line: number) => line >= first && line <= last;
    const req = requests.find((r) => r.source !== undefined && inBlock(r.source.line));
    const own = problems.filter((p) => inBlock(p.line)).sort((a, b) => a.line - b.line);
    if (!req && own.length === 0) continue;
    const messages = own.map((p) => `line ${p.line + 1}: ${p.message}`);
    const index = blocks.length;
    if (req) {
      const line = req.source!.line;
      const r = requestValues(req);
      for (const p of r.problems) messages.push(`line ${line + 1}: ${p}`);
      blocks.push({ index, ...(req.name !== undefined ? { name: req.name } : {}), summary: requestSummary(req), line, problems: messages, fields: r.fields, values: r.values });
      continue;
    }
    // Malformed: the lens goes on the first line that is neither blank nor a comment.
    let line = own[0].line;
    for (let i = first; i <= last; i++) {
      if (lines[i].trim() !== '' && !COMMENT.test(lines[i])) {
        line = i;
        break;
      }
    }
    const name = bounds[k] >= 0 ? lines[bounds[k]].replace(SEPARATOR, '').trim() : '';
    const shown = lines[line].trim();
    blocks.push({ index, ...(name ? { name } : {}), summary: shown.length > 80 ? `${shown.slice(0, 79)}…` : shown, line, problems: messages });
  }
  return blocks;
}

function info(b: RequestBlock): HttpRequestInfo {
  return { index: b.index, ...(b.name !== undefined ? { name: b.name } : {}), summary: b.summary, line: b.line, problems: b.problems };
}

/** The path of a `file:` URI, or undefined. */
function filePath(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Found {
  /** The entry-point files, in name order. */
  readonly paths: readonly string[];
  /** Where custom rulesets are looked for. */
  readonly dir: string;
  readonly from: 'parameter' | 'setting' | 'nearest';
}

interface Prepared {
  readonly checked?: CheckedZone;
  readonly names?: ReadonlyMap<string, string>;
  readonly error?: EvaluationError;
}

interface Ready {
  readonly http: { readonly path?: string; readonly name: string; readonly blocks: readonly RequestBlock[] };
  readonly ruleset?: { readonly uris: readonly string[]; readonly names: readonly string[]; readonly from: Found['from'] };
  readonly zone?: { readonly checked: CheckedZone; readonly names: ReadonlyMap<string, string> };
  readonly error?: EvaluationError;
}

class Failure {
  constructor(readonly error: EvaluationError) {}
}

const fail = (code: EvaluationError['code'], message: string, details: readonly string[] = [], rulesetUri?: string): Failure =>
  new Failure({ code, message, details: details.slice(0, MAX_DETAILS), ...(rulesetUri ? { rulesetUri } : {}) });

export class Evaluator {
  private readonly zones = new Map<string, Prepared>();
  /** Compilations so far (the cache's misses), for tests. */
  compilations = 0;

  constructor(private readonly host: EvaluationHost) {}

  /** The `.http` text: the request's, else the open document's, else the file's. */
  private httpText(p: HttpFileParams): string {
    if (typeof p.httpText === 'string') return p.httpText;
    const open = this.host.store.get(p.httpUri);
    if (open) return open.getText();
    const path = filePath(p.httpUri);
    if (!path) throw fail('unreadable', `Cannot read ${p.httpUri}: send its text (httpText).`);
    try {
      return readFileSync(path, 'utf8');
    } catch (e) {
      throw fail('unreadable', `Cannot read ${basename(path)}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}.`);
    }
  }

  /** A file's text: the editor's when open there, else the disk's (undefined when unreadable). */
  private fileText(path: string): string | undefined {
    for (const doc of this.host.store.all()) {
      if (filePath(doc.uri) === path) return doc.getText();
    }
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  }

  private rulesetFilesIn(dir: string): string[] {
    try {
      return readdirSync(dir, { withFileTypes: true })
        .filter((e) => (e.isFile() || e.isSymbolicLink()) && RULESET_FILE.test(e.name))
        .map((e) => resolve(dir, e.name))
        .sort();
    } catch {
      return [];
    }
  }

  /** A file's quick look: kind, id, phase, or undefined when it is not JSON. */
  private look(path: string): { kind?: unknown; id?: unknown; phase?: unknown; whole: boolean } | undefined {
    const text = this.fileText(path);
    if (text === undefined) return undefined;
    try {
      const v = unwrapRuleset(JSON.parse(text));
      if (!isObject(v)) return { whole: false };
      // A file without a phase of its own (a phase map, a zone file) gives every phase.
      return { kind: v.kind, id: v.id, phase: v.phase, whole: typeof v.phase !== 'string' };
    } catch {
      return undefined;
    }
  }

  /** The entry points of a folder (every ruleset file but custom and managed ones); throws when ambiguous. */
  private entryPointsIn(dir: string): string[] {
    const entries = this.rulesetFilesIn(dir).filter((f) => {
      const k = this.look(f);
      return k?.kind !== 'custom' && k?.kind !== 'managed';
    });
    if (entries.length < 2) return entries;
    const byPhase = new Map<string, string[]>();
    for (const f of entries) {
      const k = this.look(f);
      const phase = k === undefined ? '(invalid JSON)' : k.whole ? '(every phase)' : String(k.phase);
      byPhase.set(phase, [...(byPhase.get(phase) ?? []), f]);
    }
    const clash = [...byPhase.entries()].find(([phase, files]) => files.length > 1 || phase.startsWith('('));
    if (clash) {
      const [phase, files] = clash;
      const which = phase === '(every phase)' || phase === '(invalid JSON)' ? entries : files;
      const why = phase === '(every phase)' ? `${basename(files[0])} gives every phase` : phase === '(invalid JSON)' ? `${basename(files[0])} is not valid JSON` : `${files.length} are ${phase} entry points`;
      throw fail(
        'ambiguous-ruleset',
        `Several rulesets in ${dir} (${which.map((f) => basename(f)).join(', ')}) and ${why}: choose what to evaluate against with the setting rulesmith.evaluation.ruleset.`,
      );
    }
    return entries;
  }

  private isDirectory(path: string): boolean {
    try {
      return statSync(path).isDirectory();
    } catch {
      return false;
    }
  }

  private async findRuleset(httpUri: string, httpPath: string | undefined, folder: string | undefined, settings: Settings, rulesetUri?: string): Promise<Found> {
    const named = (path: string, from: Found['from'], what: string): Found => {
      if (!this.isDirectory(path)) return { paths: [path], dir: dirname(path), from };
      const paths = this.entryPointsIn(path);
      if (paths.length === 0) throw fail('no-ruleset', `No ruleset to evaluate against: ${what} names the folder ${path}, which holds no entry-point *.ruleset.json.`);
      return { paths, dir: path, from };
    };
    if (rulesetUri !== undefined) {
      const path = filePath(rulesetUri);
      if (!path) throw fail('unreadable', `The ruleset must be a file or a folder (got ${rulesetUri}).`);
      return named(path, 'parameter', 'the request');
    }
    const setting = settings.evaluationRuleset;
    if (setting !== undefined) {
      const base = folder ?? (httpPath ? dirname(httpPath) : undefined);
      const expanded = base ? setting.replace(/\$\{workspaceFolder\}/g, base) : setting;
      if (!isAbsolute(expanded) && !base) {
        throw fail('no-ruleset', `The setting rulesmith.evaluation.ruleset ("${setting}") is relative, but ${httpUri} is in no workspace folder: use an absolute path.`);
      }
      return named(resolve(base ?? '/', expanded), 'setting', 'the setting rulesmith.evaluation.ruleset');
    }
    if (!httpPath) {
      throw fail('no-ruleset', 'No ruleset to evaluate against: this file is not saved in a folder, so there is no nearest *.ruleset.json. Set rulesmith.evaluation.ruleset.');
    }
    const stop = folder ?? resolve('/');
    for (let dir = dirname(httpPath); ; dir = dirname(dir)) {
      const paths = this.entryPointsIn(dir);
      if (paths.length > 0) return { paths, dir, from: 'nearest' };
      if (dir === stop || dirname(dir) === dir || !isInside(dir, stop)) break;
    }
    const where = folder ? `between ${basename(httpPath)} and the workspace folder ${folder}` : `in ${dirname(httpPath)} or above`;
    throw fail('no-ruleset', `No ruleset to evaluate against: no *.ruleset.json ${where}. Add one, or set rulesmith.evaluation.ruleset.`);
  }

  /** Reads, checks and compiles (or takes from the cache) the zone of the entry-point files. */
  private prepare(found: Found, display: (path: string) => string, plan: Settings['plan']): Prepared {
    const entries: [string, string][] = [];
    const firstUri = pathToFileURL(found.paths[0]).href;
    for (const path of found.paths) {
      const text = this.fileText(path);
      if (text === undefined) return { error: fail('unreadable', `Cannot read the ruleset ${display(path)}: the file does not exist or is not readable.`, [], pathToFileURL(path).href).error };
      entries.push([display(path), text]);
    }
    const customs: [string, string][] = [];
    for (const f of this.rulesetFilesIn(found.dir)) {
      if (found.paths.includes(f)) continue;
      const k = this.look(f);
      const text = this.fileText(f);
      if (text !== undefined && k?.kind === 'custom' && typeof k.id === 'string' && k.id !== '') customs.push([display(f), text]);
    }
    const key = [plan ?? '', ...entries.flat(), '', ...customs.flat()].join('\u0000');
    const hit = this.zones.get(key);
    if (hit) {
      this.zones.delete(key);
      this.zones.set(key, hit);
      return hit;
    }
    const prepared = this.compile(entries, firstUri, customs, plan);
    this.zones.set(key, prepared);
    if (this.zones.size > ZONE_CACHE_SIZE) this.zones.delete(this.zones.keys().next().value as string);
    return prepared;
  }

  private compile(entries: readonly [string, string][], entryUri: string, customs: readonly [string, string][], plan: Settings['plan']): Prepared {
    this.compilations++;
    const texts = new Map<string, string>([...entries, ...customs]);
    const shown = entries.map(([n]) => n).join(' + ');
    let loaded;
    try {
      loaded = loadZoneFiles(
        entries.map(([n]) => n),
        customs.map(([n]) => n),
        (f) => texts.get(f) ?? '',
        { catalog: defaultCatalog },
      );
    } catch (e) {
      if (!(e instanceof ZoneFileError)) throw e;
      return { error: fail('ruleset-invalid', `The ruleset ${shown} cannot be used.`, [e.message], entryUri).error };
    }
    if (loaded.zone.plan === undefined && plan !== undefined) loaded = { ...loaded, zone: { ...loaded.zone, plan } };
    const checked = checkZone(loaded);
    if (checked.errors.length > 0) {
      const n = checked.errors.length;
      return {
        error: fail('ruleset-invalid', `The ruleset ${shown} has ${n} error${n === 1 ? '' : 's'}: fix ${n === 1 ? 'it' : 'them'} to evaluate requests.`, checked.errors.map((e) => e.message), entryUri).error,
      };
    }
    return { checked, names: rulesetNames(loaded.zone) };
  }

  /** Everything an evaluation needs; `error` says what is missing. */
  private async ready(p: HttpFileParams & { rulesetUri?: string }): Promise<Ready> {
    const httpPath = filePath(p.httpUri);
    const httpName = httpPath ? basename(httpPath) : p.httpUri;
    let blocks: RequestBlock[] = [];
    try {
      blocks = requestBlocks(this.httpText(p));
      const [folders, settings] = await Promise.all([this.host.workspaceFolders(), this.host.getSettings(p.httpUri)]);
      const paths = folders.map(filePath).filter((x): x is string => x !== undefined).map((f) => resolve(f));
      const folder = httpPath ? paths.filter((f) => isInside(httpPath, f)).sort((a, b) => b.length - a.length)[0] : paths[0];
      const display = (path: string) => {
        const base = folder ?? (httpPath ? dirname(httpPath) : undefined);
        return base && isInside(path, base) ? relative(base, path).split(sep).join('/') : path;
      };
      const found = await this.findRuleset(p.httpUri, httpPath, folder, settings, p.rulesetUri);
      const prepared = this.prepare(found, display, settings.plan);
      const ruleset = { uris: found.paths.map((f) => pathToFileURL(f).href), names: found.paths.map(display), from: found.from };
      const http = { path: httpPath, name: httpName, blocks };
      if (prepared.error) return { http, ruleset, error: prepared.error };
      return { http, ruleset, zone: { checked: prepared.checked!, names: prepared.names! } };
    } catch (e) {
      if (e instanceof Failure) return { http: { path: httpPath, name: httpName, blocks }, error: e.error };
      throw e;
    }
  }

  httpRequests(p: HttpFileParams): { requests: HttpRequestInfo[] } {
    try {
      return { requests: requestBlocks(this.httpText(p)).map(info) };
    } catch (e) {
      if (e instanceof Failure) return { requests: [] };
      throw e;
    }
  }

  async evaluateRequests(p: EvaluateRequestsParams): Promise<EvaluateRequestsResult> {
    const r = await this.ready(p);
    const head = r.ruleset ? { rulesetUri: r.ruleset.uris[0], rulesetUris: r.ruleset.uris, rulesetFrom: r.ruleset.from } : {};
    if (r.error || !r.zone) return { ...head, requests: r.http.blocks.map(info), error: r.error };
    const { checked, names } = r.zone;
    const requests: RequestEvaluation[] = r.http.blocks.map((b) => {
      if ((p.index !== undefined && b.index !== p.index) || b.problems.length > 0 || !b.values) return info(b);
      return { ...info(b), verdict: verdictOf(checked.compiled.evaluate(b.values), names) };
    });
    return { ...head, requests };
  }

  async evaluationTrace(p: EvaluationTraceParams): Promise<EvaluationTraceResult> {
    const r = await this.ready(p);
    const block = r.http.blocks.find((b) => b.index === p.index);
    const title = block ? `${block.name ?? block.summary} — ${r.http.name}` : `Request ${p.index + 1} — ${r.http.name}`;
    if (r.error || !r.zone) {
      const e = r.error!;
      return { markdown: errorMarkdown(title, e.message, e.details), error: e };
    }
    if (!block) return { markdown: errorMarkdown(title, `${r.http.name} has no request ${p.index + 1}: it has ${r.http.blocks.length}.`, []) };
    if (block.problems.length > 0 || !block.values) {
      return { markdown: errorMarkdown(title, `This request is malformed and was not evaluated (${r.http.name}, line ${block.line + 1}):`, block.problems) };
    }
    const { checked, names } = r.zone;
    const evaluation = checked.compiled.evaluate(block.values);
    const verdict = verdictOf(evaluation, names);
    const markdown = traceMarkdown({
      title,
      summary: block.summary,
      where: `${r.http.name}, line ${block.line + 1}`,
      ruleset: r.ruleset!.names.join(' + '),
      fields: block.fields ?? {},
      evaluation,
      verdict,
      names,
    });
    return { markdown, verdict };
  }
}

const INTERNAL: EvaluationError = { code: 'internal', message: 'The evaluation failed inside the language server: see the Rulesmith output for the details.', details: [] };

/** Registers the three requests on the connection. */
export function registerEvaluation(connection: Connection, store: DocumentStore, getSettings: (uri: string) => Promise<Settings>, log: Logger): Evaluator {
  const evaluator = new Evaluator({
    store,
    getSettings,
    // Asked each time (folders come and go); a client that cannot answer means "none".
    workspaceFolders: async () => {
      try {
        return ((await connection.workspace.getWorkspaceFolders()) ?? []).map((f) => f.uri);
      } catch {
        return [];
      }
    },
  });
  // By method name: the server's vscode-languageserver bundles its own copy of the protocol
  // package, whose RequestType is not the type-checker's same class as protocol.ts's (the
  // client's copy); the handlers stay typed by protocol.ts's request types.
  const on = <P, R>(type: RequestType<P, R, void>, what: string, empty: R, work: (p: P) => R | Promise<R>) =>
    connection.onRequest(type.method, (p: P, token: CancellationToken) => runSafe(log, what, token, empty, () => work(p)));
  on(HttpRequestsRequest, 'httpRequests', { requests: [] }, (p) => evaluator.httpRequests(p));
  on(EvaluateRequestsRequest, 'evaluateRequests', { requests: [], error: INTERNAL }, (p) => evaluator.evaluateRequests(p));
  const traceFailed = { markdown: errorMarkdown('Evaluation trace', INTERNAL.message, []), error: INTERNAL };
  on(EvaluationTraceRequest, 'evaluationTrace', traceFailed, (p) => evaluator.evaluationTrace(p));
  return evaluator;
}
