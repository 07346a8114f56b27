/**
 * Diagnostics are data. Every one has a stable `code`, a range of UTF-16 offsets into
 * the expression text, the engine's own wording in `message` where the engine has one,
 * and a plain-language `hint` saying how to fix it.
 */
export type Severity = 'error' | 'warning' | 'information' | 'hint';

export interface Range {
  /** UTF-16 offset of the first character. */
  readonly start: number;
  /** UTF-16 offset just past the last character (equal to start for a point). */
  readonly end: number;
}

/** Stable codes. Renaming one is a breaking change for users who filter on them. */
export type DiagnosticCode =
  // lexing and syntax (the engine's LexErrorKind)
  | 'syntax-error' // expected literal ")" etc.
  | 'expected-comparison-op'
  | 'unknown-operator' // `equals`, `===`: the engine's text, and the operator meant
  | 'unrecognised-input'
  | 'tab-character'
  | 'unterminated-string'
  | 'invalid-escape'
  | 'invalid-raw-string'
  | 'invalid-integer'
  | 'invalid-ip'
  | 'invalid-hex-bytes'
  | 'invalid-index'
  | 'invalid-list-name'
  | 'incompatible-range-bounds'
  | 'cidr-outside-set'
  | 'empty-expression'
  // names and types
  | 'unknown-field'
  | 'unknown-function'
  | 'unknown-identifier'
  | 'operator-type-mismatch'
  | 'type-mismatch'
  | 'invalid-index-access'
  | 'invalid-map-each'
  | 'argument-count'
  | 'argument-kind'
  | 'argument-type'
  | 'argument-value'
  | 'dynamic-comparison-disabled'
  // patterns
  | 'invalid-regex'
  | 'invalid-wildcard'
  // limits
  | 'expression-too-long'
  | 'nesting-too-deep'
  | 'too-many-regexes'
  | 'replace-function-limit'
  // warnings a user needs
  | 'deprecated-field'
  | 'plan-required'
  | 'not-in-phase'
  | 'ratelimit-restriction'
  | 'method-not-uppercase'
  | 'header-key-not-lowercase'
  | 'path-without-slash'
  | 'never-matches'
  | 'ip-ordering'
  | 'unknown-list'
  | 'managed-only';

export interface Diagnostic {
  readonly range: Range;
  readonly severity: Severity;
  readonly code: DiagnosticCode;
  /** The engine's wording where it has one (reference §7), otherwise ours. */
  readonly message: string;
  /** What to do about it, in plain language. */
  readonly hint?: string;
  /** Machine-readable extras for quick fixes (e.g. `{ replacement: "ip.src.country" }`). */
  readonly data?: Readonly<Record<string, unknown>>;
}

function make(severity: Severity) {
  return (
    code: DiagnosticCode,
    start: number,
    end: number,
    message: string,
    hint?: string,
    data?: Record<string, unknown>,
  ): Diagnostic => ({ range: { start, end }, severity, code, message, hint, data });
}

export const error = make('error');
export const warning = make('warning');
