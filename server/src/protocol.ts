/**
 * Rulesmith's custom LSP requests, `rulesmith/<name>`, shared by the language server and
 * the client (esbuild bundles this file into both). Types only, plus the RequestType
 * objects; nothing here may import the core or VS Code.
 *
 * Positions are LSP's: 0-based lines. Request indexes are 0-based, in file order, and
 * count every request block of the `.http` file, malformed ones included, so that the
 * client's CodeLens and the server's verdicts always name the same request.
 */
import { RequestType } from 'vscode-languageserver-protocol';

/** A `.http` file: where it is and, when the editor has it, its current text. */
export interface HttpFileParams {
  /** The `.http` file (a `file:` URI for the nearest-ruleset lookup; any URI with `rulesetUri`). */
  readonly httpUri: string;
  /** The text as in the editor (unsaved changes included); read from disk when absent. */
  readonly httpText?: string;
}

export interface EvaluateRequestsParams extends HttpFileParams {
  /**
   * The ruleset to evaluate against: an entry-point ruleset, a phase map or a zone file
   * (the shapes of `rulesmith eval --config`), or a folder of them (one per phase). When
   * absent: the setting `rulesmith.evaluation.ruleset` of the `.http` file, else the
   * nearest folder with `*.ruleset.json` files.
   */
  readonly rulesetUri?: string;
  /** Evaluate only this request (0-based); every request when absent. */
  readonly index?: number;
}

/** One request block of a `.http` file. */
export interface HttpRequestInfo {
  readonly index: number;
  /** `### name` or `# @name name`. */
  readonly name?: string;
  /** `METHOD /path?query`, or the request line as written when the request is malformed. */
  readonly summary: string;
  /** 0-based line of the request line (where the CodeLens goes). */
  readonly line: number;
  /** Why the request cannot be evaluated (`line 4: bad header name …`); empty when it can. */
  readonly problems: readonly string[];
}

export interface HttpRequestParams extends HttpFileParams {
  /** The request by its index (as in HttpRequestInfo.index) … */
  readonly index?: number;
  /** … or the one whose block holds this 0-based line (the cursor); the first request when neither is given. */
  readonly line?: number;
}

/** A request as written in a `.http` file, to send elsewhere (the zone's Trace). */
export interface HttpRequestContent {
  readonly method: string;
  /** As written: absolute, or a path with a Host header. */
  readonly url: string;
  /** `HTTP/1.1` when not written. */
  readonly httpVersion: string;
  /** In order, names as written. */
  readonly headers: readonly (readonly [string, string])[];
  /** The body's bytes in base64; absent when there is no body. */
  readonly bodyBase64?: string;
  /** Field values from metadata comments (`# @ip.src 203.0.113.9`): field name -> text. */
  readonly meta: Readonly<Record<string, string>>;
}

export interface HttpRequestResult {
  /** The block asked for; absent when the file has no such request. */
  readonly request?: HttpRequestInfo;
  /** What it sends; absent when it is malformed (`request.problems` says why). */
  readonly content?: HttpRequestContent;
  /** How many requests the file has (malformed ones included). */
  readonly count: number;
}

export type VerdictAction = 'allow-through' | 'block' | 'challenge' | 'js_challenge' | 'managed_challenge';

/** What the service would do with a request, and which rule decided. */
export interface Verdict {
  readonly action: VerdictAction;
  /** For the CodeLens: `Blocked by vendor:log4shell-uri (http_request_firewall_managed)`, `Passed — no rule acted`. */
  readonly title: string;
  /** The deciding rule's short name (`vendor:log4shell-uri`, `block-admin`), when a rule decided. */
  readonly rule?: string;
  readonly ruleId?: string;
  readonly ref?: string;
  readonly description?: string;
  /** Where the deciding rule ran: a phase, `legacy_firewall_rules` or `previous_waf`. */
  readonly phase?: string;
  readonly rulesetId?: string;
  readonly rulesetName?: string;
  /** The anomaly score: the total that reached the threshold, or the highest total of the request. */
  readonly score?: number;
  /** The threshold of the anomaly rule that acted (or that the score stayed under). */
  readonly threshold?: number;
}

export interface RequestEvaluation extends HttpRequestInfo {
  /** Absent when the request was not evaluated (malformed, or not the one asked for). */
  readonly verdict?: Verdict;
}

export type EvaluationErrorCode =
  /** No `rulesetUri`, no setting, and no `*.ruleset.json` from the `.http` file's folder up to its workspace folder. */
  | 'no-ruleset'
  /** Entry points in the nearest folder that clash (two for one phase, or a zone file among others): the setting must choose. */
  | 'ambiguous-ruleset'
  /** The ruleset (or the `.http` file) cannot be read. */
  | 'unreadable'
  /** The ruleset has errors (invalid JSON, wrong shape, validation errors). */
  | 'ruleset-invalid'
  /** A request's evaluation took longer than the time limit and was stopped (`index` says which). */
  | 'timeout'
  /** The server failed; the log has the details. */
  | 'internal';

export interface EvaluationError {
  readonly code: EvaluationErrorCode;
  /** One sentence a person can act on. */
  readonly message: string;
  /** The first errors (`zone.ruleset.json:12:9: error[unknown-field] (rule 2 "x"): …`), at most 5. */
  readonly details: readonly string[];
  /** The ruleset concerned, when one was found. */
  readonly rulesetUri?: string;
  /** `ruleset-invalid`: where the first error is (0-based; line 0 when only the file is known), for "Open first error". */
  readonly location?: { readonly uri: string; readonly line: number; readonly character: number };
  /** `ambiguous-ruleset`: the clashing entry-point files, one of which the setting can name. */
  readonly candidates?: readonly string[];
  /** `timeout`: the request that was stopped (0-based). */
  readonly index?: number;
}

export interface EvaluateRequestsResult {
  /** The ruleset used (or that failed): the first entry-point file. */
  readonly rulesetUri?: string;
  /** Every entry-point file of the zone (a folder gives one per phase). */
  readonly rulesetUris?: readonly string[];
  /** How it was chosen. */
  readonly rulesetFrom?: 'parameter' | 'setting' | 'nearest';
  /** Every request of the file, evaluated or not; present even with an error. */
  readonly requests: readonly RequestEvaluation[];
  /**
   * Set when nothing could be evaluated (`requests` then carry no verdict), or, with code
   * `timeout`, when a request was stopped: those evaluated before it keep their verdicts.
   */
  readonly error?: EvaluationError;
}

export interface EvaluationTraceParams extends HttpFileParams {
  /** The request (0-based, as in HttpRequestInfo.index). */
  readonly index: number;
  readonly rulesetUri?: string;
  /** What the page shows: every rule (default: matched only), the `crs.*` fields (default: hidden). */
  readonly view?: { readonly allRules?: boolean; readonly internals?: boolean };
}

export interface EvaluationTraceResult {
  /**
   * The trace as Markdown: the request, the field values used, every rule looked at per
   * phase (matched or not, action, score added, skipped by), and the decision. With an
   * error, a short page that explains it.
   */
  readonly markdown: string;
  readonly verdict?: Verdict;
  readonly error?: EvaluationError;
}

/** The request blocks of a `.http` file with their positions and problems (for CodeLens); nothing is evaluated. */
export const HttpRequestsRequest = new RequestType<HttpFileParams, { readonly requests: readonly HttpRequestInfo[] }, void>('rulesmith/httpRequests');

/** One request of a `.http` file, by index or by a line of its block, with what it sends; nothing is evaluated. */
export const HttpRequestRequest = new RequestType<HttpRequestParams, HttpRequestResult, void>('rulesmith/httpRequest');

/** Evaluates the requests of a `.http` file against a ruleset: per request the verdict, or an error saying what is missing. */
export const EvaluateRequestsRequest = new RequestType<EvaluateRequestsParams, EvaluateRequestsResult, void>('rulesmith/evaluateRequests');

/** The full trace of one request's evaluation, as Markdown for a read-only view. */
export const EvaluationTraceRequest = new RequestType<EvaluationTraceParams, EvaluationTraceResult, void>('rulesmith/evaluationTrace');

/** Files to check into Problems whether or not they are open ("Rulesmith: Check Workspace"). */
export interface CheckFilesParams {
  readonly files: readonly { readonly uri: string; readonly languageId?: string; readonly text: string }[];
}

export interface CheckFilesResult {
  /** Files that are ours (`.cfrule`, ruleset JSON) among those sent. */
  readonly checked: number;
  readonly errors: number;
  readonly warnings: number;
  /** Files with at least one error or warning. */
  readonly withProblems: number;
}

/** rulesmith/checkFiles: publishes each file's diagnostics (open files keep the editor's text). */
export const CheckFilesRequest = new RequestType<CheckFilesParams, CheckFilesResult, void>('rulesmith/checkFiles');
