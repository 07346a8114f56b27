/**
 * "Evaluate" for `.http` files: the requests `rulesmith/httpRequests`,
 * `rulesmith/httpRequest`, `rulesmith/evaluateRequests` and `rulesmith/evaluationTrace`
 * (server/src/protocol.ts).
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
 * the `.http` text comes with the request (the client does not sync `.http` files). The
 * files are read here; compiling and evaluating run in the evaluation worker thread
 * (evaluationJob.ts) with a time limit per request, so a pathological request cannot
 * stall the server. A zone is compiled once per set of file texts (a small LRU cache in
 * the worker), so evaluating again after editing a request costs only the evaluation. A
 * ruleset with errors is not evaluated (as `rulesmith eval` refuses it): the error lists
 * the first ones and says where the first is.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CancellationToken, Connection } from 'vscode-languageserver/node';
import type { RequestType } from 'vscode-languageserver-protocol';
import { unwrapRuleset } from '../rulesets/zoneFile';
import { TimedWorker, WorkerTimeout } from '../timedWorker';
import {
  EvaluateRequestsRequest,
  EvaluationTraceRequest,
  HttpRequestRequest,
  HttpRequestsRequest,
  type EvaluateRequestsParams,
  type EvaluateRequestsResult,
  type EvaluationError,
  type EvaluationTraceParams,
  type EvaluationTraceResult,
  type HttpFileParams,
  type HttpRequestInfo,
  type HttpRequestParams,
  type HttpRequestResult,
  type RequestEvaluation,
  type Verdict,
} from '../protocol';
import { httpRequestAnswer } from './httpRequest';
import type { DocumentStore } from './documents';
import { evaluationReply, type EvaluationJob, type EvaluationProgress, type EvaluationReply, type ZoneTexts } from './evaluationJob';
import { errorMarkdown } from './evaluationTrace';
import { info, requestBlocks, type RequestBlock } from './httpBlocks';
import { runSafe, type Logger } from './runSafe';
import type { Settings } from './settings';

/** What the evaluation needs from the server: open documents, settings, workspace folders. */
export interface EvaluationHost {
  readonly store: DocumentStore;
  readonly getSettings: (uri: string) => Promise<Settings>;
  /** Workspace folder URIs (empty when the client cannot say). */
  readonly workspaceFolders: () => Promise<readonly string[]>;
}

/** The default limit for one request's evaluation (the service's Trace has the same). */
export const EVALUATION_TIMEOUT_MS = 10_000;
/** What compiling a zone may take on top (bounded by the rulesets' limits, and cached). */
const COMPILE_TIMEOUT_MS = 60_000;
/** How many errors an error carries. */
const MAX_DETAILS = 5;
const RULESET_FILE = /\.ruleset\.json$/i;

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

interface Ready {
  readonly http: { readonly path?: string; readonly name: string; readonly blocks: readonly RequestBlock[] };
  readonly ruleset?: { readonly uris: readonly string[]; readonly names: readonly string[]; readonly from: Found['from'] };
  /** The zone's files, and each shown name's file (to turn the worker's answers into URIs). */
  readonly zone?: { readonly texts: ZoneTexts; readonly paths: ReadonlyMap<string, string> };
  readonly error?: EvaluationError;
  /** The inspection limit for bodies (setting rulesmith.evaluation.bodyLimit), when not the default. */
  readonly bodyLimit?: number;
}

/** Runs a job: in the worker with the time limit, or inline (no built worker). */
export type EvaluationRunner = (job: EvaluationJob, onProgress: (p: EvaluationProgress) => void) => Promise<EvaluationReply>;

class Failure {
  constructor(readonly error: EvaluationError) {}
}

const fail = (code: EvaluationError['code'], message: string, details: readonly string[] = [], rulesetUri?: string, extra: Partial<EvaluationError> = {}): Failure =>
  new Failure({ code, message, details: details.slice(0, MAX_DETAILS), ...(rulesetUri ? { rulesetUri } : {}), ...extra });

export class Evaluator {
  constructor(
    private readonly host: EvaluationHost,
    private readonly runJob: EvaluationRunner = async (job, onProgress) => evaluationReply(job, onProgress),
  ) {}

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
        [],
        undefined,
        { candidates: which.map((f) => pathToFileURL(f).href) },
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

  /** Reads the zone's files: the entry points and the custom rulesets beside them. */
  private zoneTexts(found: Found, display: (path: string) => string, plan: Settings['plan']): { texts: ZoneTexts; paths: Map<string, string> } {
    const entries: [string, string][] = [];
    const paths = new Map<string, string>();
    for (const path of found.paths) {
      const text = this.fileText(path);
      if (text === undefined) throw fail('unreadable', `Cannot read the ruleset ${display(path)}: the file does not exist or is not readable.`, [], pathToFileURL(path).href);
      entries.push([display(path), text]);
      paths.set(display(path), path);
    }
    const customs: [string, string][] = [];
    for (const f of this.rulesetFilesIn(found.dir)) {
      if (found.paths.includes(f)) continue;
      const k = this.look(f);
      const text = this.fileText(f);
      if (text !== undefined && k?.kind === 'custom' && typeof k.id === 'string' && k.id !== '') {
        customs.push([display(f), text]);
        paths.set(display(f), f);
      }
    }
    return { texts: { entries, customs, ...(plan !== undefined ? { plan } : {}) }, paths };
  }

  /** Everything an evaluation needs; `error` says what is missing. */
  private async ready(p: HttpFileParams & { rulesetUri?: string }): Promise<Ready> {
    const httpPath = filePath(p.httpUri);
    const httpName = httpPath ? basename(httpPath) : p.httpUri;
    let blocks: RequestBlock[] = [];
    let ruleset: Ready['ruleset'];
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
      ruleset = { uris: found.paths.map((f) => pathToFileURL(f).href), names: found.paths.map(display), from: found.from };
      const limit = settings.evaluationBodyLimit !== undefined ? { bodyLimit: settings.evaluationBodyLimit } : {};
      return { http: { path: httpPath, name: httpName, blocks }, ruleset, zone: this.zoneTexts(found, display, settings.plan), ...limit };
    } catch (e) {
      if (e instanceof Failure) return { http: { path: httpPath, name: httpName, blocks }, ...(ruleset ? { ruleset } : {}), error: e.error };
      throw e;
    }
  }

  /** Runs the job; a zone problem, a timeout or a crash becomes the error. */
  private async run(r: Ready, job: EvaluationJob, onProgress: (p: EvaluationProgress) => void = () => undefined): Promise<{ reply?: EvaluationReply; error?: EvaluationError }> {
    const zone = r.zone!;
    const entryUri = r.ruleset!.uris[0];
    let last: EvaluationProgress | undefined;
    let reply: EvaluationReply;
    try {
      reply = await this.runJob(job, (p) => {
        last = p;
        onProgress(p);
      });
    } catch (e) {
      if (!(e instanceof WorkerTimeout)) throw e;
      const s = e.limitMs / 1000;
      const index = last && 'start' in last ? last.start : undefined;
      const block = index !== undefined ? r.http.blocks.find((b) => b.index === index) : undefined;
      if (!block) return { error: { code: 'timeout', message: `Compiling the ruleset ${r.ruleset!.names.join(' + ')} did not finish in time and was stopped.`, details: [], rulesetUri: entryUri } };
      const which = `Request ${block.index + 1}${block.name ? ` "${block.name}"` : ''}`;
      return {
        error: {
          code: 'timeout',
          message: `${which} did not finish within ${s} s and was stopped: evaluating it against the ruleset takes too long (a large URL, header or body can make the OWASP-based ruleset's regular expressions backtrack). Shorten the request.`,
          details: [],
          rulesetUri: entryUri,
          index: block.index,
        },
      };
    }
    if ('crash' in reply) throw new Error(`the evaluation failed: ${reply.crash}`);
    if ('zoneProblem' in reply) {
      const z = reply.zoneProblem;
      const path = z.file !== undefined ? zone.paths.get(z.file) : undefined;
      const location = path ? { uri: pathToFileURL(path).href, line: z.line ?? 0, character: z.character ?? 0 } : undefined;
      return { error: { code: 'ruleset-invalid', message: z.message, details: z.details, rulesetUri: entryUri, ...(location ? { location } : {}) } };
    }
    return { reply };
  }

  httpRequests(p: HttpFileParams): { requests: HttpRequestInfo[] } {
    try {
      return { requests: requestBlocks(this.httpText(p)).map(info) };
    } catch (e) {
      if (e instanceof Failure) return { requests: [] };
      throw e;
    }
  }

  httpRequest(p: HttpRequestParams): HttpRequestResult {
    try {
      return httpRequestAnswer(requestBlocks(this.httpText(p)), p);
    } catch (e) {
      if (e instanceof Failure) return { count: 0 };
      throw e;
    }
  }

  async evaluateRequests(p: EvaluateRequestsParams): Promise<EvaluateRequestsResult> {
    const r = await this.ready(p);
    const head = r.ruleset ? { rulesetUri: r.ruleset.uris[0], rulesetUris: r.ruleset.uris, rulesetFrom: r.ruleset.from } : {};
    if (r.error || !r.zone) return { ...head, requests: r.http.blocks.map(info), error: r.error };
    // Verdicts as they come: a request stopped by the limit keeps those before it.
    const verdicts = new Map<number, Verdict>();
    const { reply, error } = await this.run(r, { kind: 'evaluate', zone: r.zone.texts, httpText: this.httpText(p), ...(p.index !== undefined ? { index: p.index } : {}), ...(r.bodyLimit !== undefined ? { bodyLimit: r.bodyLimit } : {}) }, (pr) => {
      if ('done' in pr) verdicts.set(pr.done, pr.verdict);
    });
    if (reply && 'verdicts' in reply) for (const [i, v] of reply.verdicts) verdicts.set(i, v);
    const requests: RequestEvaluation[] = r.http.blocks.map((b) => {
      const verdict = verdicts.get(b.index);
      return verdict ? { ...info(b), verdict } : info(b);
    });
    return { ...head, requests, ...(error ? { error } : {}) };
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
    const job: EvaluationJob = {
      kind: 'trace',
      zone: r.zone.texts,
      httpText: this.httpText(p),
      index: p.index,
      title,
      where: `${r.http.name}, line ${block.line + 1}`,
      ruleset: r.ruleset!.names.join(' + '),
      ...(r.bodyLimit !== undefined ? { bodyLimit: r.bodyLimit } : {}),
      ...(p.view ? { view: p.view } : {}),
    };
    const { reply, error } = await this.run(r, job);
    if (error) return { markdown: errorMarkdown(title, error.message, error.details), error };
    if (!reply || !('markdown' in reply)) throw new Error('the evaluation worker answered a trace without one');
    return { markdown: reply.markdown, verdict: reply.verdict };
  }
}

const INTERNAL: EvaluationError = { code: 'internal', message: 'The evaluation failed inside the language server: see the Rulesmith output for the details.', details: [] };

/** Where the built worker is: beside the server's bundle, or server/out when running from source. */
function workerFile(): string | undefined {
  return [join(__dirname, 'evaluationWorker.js'), resolve(__dirname, '../../out/evaluationWorker.js')].find((f) => existsSync(f));
}

/**
 * Jobs in the evaluation worker with the time limit `timeoutMs()` (asked at the first job:
 * the server learns it at initialize); inline without the built worker (no limit then).
 */
function workerRunner(timeoutMs: () => number): EvaluationRunner {
  const file = workerFile();
  if (!file) return async (job, onProgress) => evaluationReply(job, onProgress);
  let worker: TimedWorker<EvaluationJob, EvaluationReply, EvaluationProgress> | undefined;
  return (job, onProgress) => {
    worker ??= new TimedWorker(file, { timeoutMs: timeoutMs(), prepareMs: COMPILE_TIMEOUT_MS });
    return worker.run(job, onProgress);
  };
}

/** Registers the four requests on the connection; `timeoutMs` is the limit of one request's evaluation. */
export function registerEvaluation(
  connection: Connection,
  store: DocumentStore,
  getSettings: (uri: string) => Promise<Settings>,
  log: Logger,
  timeoutMs: () => number = () => EVALUATION_TIMEOUT_MS,
): Evaluator {
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
  }, workerRunner(timeoutMs));
  // By method name: the server's vscode-languageserver bundles its own copy of the protocol
  // package, whose RequestType is not the type-checker's same class as protocol.ts's (the
  // client's copy); the handlers stay typed by protocol.ts's request types.
  const on = <P, R>(type: RequestType<P, R, void>, what: string, empty: R, work: (p: P) => R | Promise<R>) =>
    connection.onRequest(type.method, (p: P, token: CancellationToken) => runSafe(log, what, token, empty, () => work(p)));
  on(HttpRequestsRequest, 'httpRequests', { requests: [] }, (p) => evaluator.httpRequests(p));
  on(HttpRequestRequest, 'httpRequest', { count: 0 }, (p) => evaluator.httpRequest(p));
  on(EvaluateRequestsRequest, 'evaluateRequests', { requests: [], error: INTERNAL }, (p) => evaluator.evaluateRequests(p));
  const traceFailed = { markdown: errorMarkdown('Evaluation trace', INTERNAL.message, []), error: INTERNAL };
  on(EvaluationTraceRequest, 'evaluationTrace', traceFailed, (p) => evaluator.evaluationTrace(p));
  return evaluator;
}
