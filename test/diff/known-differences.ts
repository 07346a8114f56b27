/**
 * The ONE list of known, intended differences between our engine and the wirefilter build
 * shipped by firewalker (wirefilter-ffi 0.7.0 at cloudflare/wirefilter 2334ab15 plus
 * firewalker's patches). A difference belongs here only when our behaviour follows the
 * Rules language reference (section given in `reference`) and
 * the old build differs because it predates that behaviour or because firewalker's
 * patches implement a function differently. Anything else is a bug on one side and must
 * fail the differential test.
 *
 * Each `matches` looks only at the expression and the two outcomes, and should be as
 * narrow as possible so that it cannot hide an unrelated bug.
 */

/** What one engine did with one input. */
export type Outcome =
  | {
      readonly phase: 'parse';
      readonly accepted: boolean;
      /** The first error's message (ours) or the engine's error text (theirs). */
      readonly message?: string;
      /** Ours only: the first error's range (UTF-16 offsets). */
      readonly range?: readonly [number, number];
    }
  | {
      readonly phase: 'eval';
      readonly result: boolean | 'error';
      readonly message?: string;
      readonly fields: Readonly<Record<string, unknown>>;
      /**
       * Ours only, filled in on a mismatch: the result when compiled with wirefilter's nil
       * semantics (`nilNotEqual: true`, a missing left side makes `!=` true).
       */
      readonly nilNotEqual?: boolean | 'error';
    };

export interface KnownDifference {
  readonly id: string;
  readonly description: string;
  /** The reference section(s) that justify our side. */
  readonly reference: string;
  matches(expr: string, ours: Outcome, theirs: Outcome): boolean;
}

// ---------------------------------------------------------------------------------------
// Helpers: a tiny scanner that knows where quoted and raw strings are, so that a keyword
// inside a string literal does not count.

interface Scan {
  /** The expression with the contents of every string literal replaced by spaces. */
  readonly code: string;
  /** Where raw strings (`r"…"`, `r#"…"#`) start, outside quoted strings. */
  readonly rawStrings: readonly number[];
  /** The quoted strings (with their quotes), outside raw strings, and where they start. */
  readonly quoted: ReadonlyArray<{ readonly at: number; readonly text: string }>;
}

function scan(expr: string): Scan {
  let code = '';
  const rawStrings: number[] = [];
  const quoted: { at: number; text: string }[] = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i];
    const prev = i > 0 ? expr[i - 1] : ' ';
    const raw = /^r(#*)"/.exec(expr.slice(i));
    if (raw && !/[A-Za-z0-9_.]/.test(prev)) {
      rawStrings.push(i);
      const close = '"' + raw[1];
      const end = expr.indexOf(close, i + raw[0].length);
      const stop = end < 0 ? expr.length : end + close.length;
      code += ' '.repeat(stop - i);
      i = stop;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < expr.length && expr[j] !== '"') j += expr[j] === '\\' ? 2 : 1;
      const stop = Math.min(expr.length, j + 1);
      quoted.push({ at: i, text: expr.slice(i, stop) });
      code += '"' + ' '.repeat(Math.max(0, stop - i - 2)) + (stop - i >= 2 ? '"' : '');
      i = stop;
      continue;
    }
    code += c;
    i++;
  }
  return { code, rawStrings, quoted };
}

/** Offsets of the matches of `re` (global) in the expression outside string literals. */
function offsets(expr: string, re: RegExp): number[] {
  return [...scan(expr).code.matchAll(re)].map((m) => m.index ?? 0);
}

/**
 * The span [start, end] (UTF-16 offsets) that an engine report
 * `Filter parsing error (LINE:COL):\n<line>\n<carets> <message>` underlines. LINE/COL are
 * 1-based, COL and the caret count are in bytes.
 */
export function engineErrorSpan(expr: string, message: string): readonly [number, number] | undefined {
  const head = /^Filter parsing error \((\d+):(\d+)\):\n/.exec(message);
  if (!head) return undefined;
  const rest = message.slice(head[0].length).split('\n');
  const carets = rest.length >= 2 ? /^ *(\^+)/.exec(rest[1]) : null;
  const line = Number(head[1]);
  const col = Number(head[2]);
  // Positions count in the input as given (before the engine trims it).
  const lines = expr.split('\n');
  if (line < 1 || line > lines.length) return undefined;
  let lineStart = 0;
  for (let i = 0; i < line - 1; i++) lineStart += lines[i].length + 1;
  const text = lines[line - 1];
  const at = (byte: number): number => {
    let bytes = 0;
    let i = 0;
    for (const ch of text) {
      if (bytes >= byte) break;
      bytes += Buffer.byteLength(ch, 'utf8');
      i += ch.length;
    }
    return lineStart + i;
  };
  const start = at(col - 1);
  if (!carets) return [start, start];
  const endByte = col - 1 + carets[1].length;
  // Carets are clipped at the end of the line: the span may go on below.
  if (endByte >= Buffer.byteLength(text, 'utf8') && line < lines.length) return [start, expr.length];
  return [start, at(endByte)];
}

/**
 * Whether the engine's error span starts at one of `points`, or (when `within`) covers
 * it or ends right before it (only whitespace between): an argument of any()/all() that
 * the engine cut short at an unknown operator is reported over the part it did read.
 */
function errorAt(expr: string, o: Outcome, points: readonly number[], within: boolean): boolean {
  const span = engineErrorSpan(expr, o.message ?? '');
  if (!span) return false;
  return points.some((p) => (within ? span[0] <= p && (p <= span[1] || /^[ \r\n]*$/.test(expr.slice(span[1], p))) : span[0] === p));
}

const parseMismatch = (ours: Outcome, theirs: Outcome, oursAccepts: boolean): boolean =>
  ours.phase === 'parse' && theirs.phase === 'parse' && ours.accepted === oursAccepts && theirs.accepted === !oursAccepts;

const messageOf = (o: Outcome): string => o.message ?? '';

/** Integer literals outside the 32-bit range, as the engine would read them. */
function hasWideInt(code: string): boolean {
  // `a..b` ranges: split the bounds first.
  for (const m of code.replace(/\.\./g, ' ').matchAll(/(?<![A-Za-z0-9_.:$])(-?)(0x[0-9A-Fa-f]+|[0-9]+)(?![0-9A-Za-z.:_])/g)) {
    const text = m[2];
    let v: bigint;
    try {
      v = text.startsWith('0x') ? BigInt(text) : text.length > 1 && text.startsWith('0') ? BigInt('0o' + text.slice(1)) : BigInt(text);
    } catch {
      continue;
    }
    if (m[1] === '-') v = -v;
    if (v > 2147483647n || v < -2147483648n) return true;
  }
  return false;
}

/** The byte length of the shortest string anywhere in the field values. */
function shortestString(o: Outcome): number {
  if (o.phase !== 'eval') return Infinity;
  let min = Infinity;
  const walk = (v: unknown): void => {
    if (typeof v === 'string') min = Math.min(min, Buffer.byteLength(v, 'utf8'));
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v !== null && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(o.fields);
  return min;
}

function fieldsContain(o: Outcome, needle: RegExp): boolean {
  return o.phase === 'eval' && needle.test(JSON.stringify(o.fields));
}

// ---------------------------------------------------------------------------------------

/** The top-level arguments (as code, strings blanked) of every call to `name`. */
function callArgs(expr: string, name: string): string[][] {
  const code = scan(expr).code;
  const out: string[][] = [];
  for (const m of code.matchAll(new RegExp(`(?<![A-Za-z0-9_.])${name}\\s*\\(`, 'g'))) {
    let depth = 0;
    let arg = '';
    const args: string[] = [];
    for (let i = (m.index ?? 0) + m[0].length; i < code.length; i++) {
      const c = code[i];
      if (c === '(' || c === '[' || c === '{') depth++;
      if (c === ')' || c === ']' || c === '}') {
        if (depth === 0) break;
        depth--;
      }
      if (c === ',' && depth === 0) {
        args.push(arg.trim());
        arg = '';
      } else arg += c;
    }
    args.push(arg.trim());
    out.push(args);
  }
  return out;
}

/** Quoted strings holding an escape of a byte >= 0x80 (`\xC3`, `\303`). */
function hasHighByteEscape(expr: string): boolean {
  return scan(expr).quoted.some((q) => /(?<!\\)(?:\\\\)*\\(?:x[89A-Fa-f][0-9A-Fa-f]|[23][0-7]{2})/.test(q.text));
}

export const KNOWN_DIFFERENCES: readonly KnownDifference[] = [
  {
    id: 'raw-strings',
    description:
      'Raw strings r"…" / r#"…"# are newer than this wirefilter build, which rejects them where they start (an unknown identifier `r`, a hex-bytes error, or "expected literal \\"\\"\\""). We accept them.',
    reference: '§1.4 (b) Raw string',
    matches: (expr, ours, theirs) => parseMismatch(ours, theirs, true) && errorAt(expr, theirs, scan(expr).rawStrings, true),
  },
  {
    id: 'wildcard-operator',
    description:
      'The `wildcard` operator does not exist in this wirefilter build ("expected ComparisonOp" where it starts, or an argument type error when inside any()/all()); current Cloudflare has it (case-insensitive whole-value match).',
    reference: '§1.3 operator table, §3.2 (`wildcard`), §1.4 Wildcard patterns',
    matches: (expr, ours, theirs) =>
      parseMismatch(ours, theirs, true) && errorAt(expr, theirs, offsets(expr, /(?<![A-Za-z0-9_.]|strict )wildcard(?![A-Za-z0-9_.])/g), true),
  },
  {
    id: 'strict-wildcard-operator',
    description: 'Same for `strict wildcard` (case-sensitive), also absent from this build.',
    reference: '§1.3 operator table (`strict wildcard`), §3.2',
    matches: (expr, ours, theirs) => parseMismatch(ours, theirs, true) && errorAt(expr, theirs, offsets(expr, /(?<![A-Za-z0-9_.])strict wildcard/g), true),
  },
  {
    id: 'regex-newer-syntax',
    description:
      "This build's regex crate predates syntax the current engine accepts: superfluous escapes of ASCII punctuation (`\\/`, `\\%`, `\\_`), named groups `(?<n>…)`, the CRLF flag `R`, empty classes (`[a&&b]`).",
    reference: '§6.2 Regular expressions (flags `i m s U x u R`, `(?<n>…)`, class set operations)',
    matches: (expr, ours, theirs) =>
      parseMismatch(ours, theirs, true) &&
      /regex parse error/.test(messageOf(theirs)) &&
      (/error: empty character classes are not allowed/.test(messageOf(theirs)) ||
        (/error: unrecognized flag/.test(messageOf(theirs)) && /\(\?(<|[a-zA-Z-]*R)/.test(expr)) ||
        (/error: unrecognized escape sequence/.test(messageOf(theirs)) && /\\[^0-9A-Za-z\s"\\<>]|\\ /.test(expr))),
  },
  {
    id: 'int-64-bit',
    description:
      "This build's Int is 32-bit: integer literals outside ±2^31 fail with \"number too large/small to fit in target type\". Cloudflare's Int is a signed 64-bit integer.",
    reference: '§1.5 Integer literals (Range: signed 64-bit), §3.1, §6.3',
    matches: (expr, ours, theirs) =>
      parseMismatch(ours, theirs, true) && /number too (large|small) to fit in target type/.test(messageOf(theirs)) && hasWideInt(scan(expr).code),
  },
  {
    id: 'list-types',
    description:
      'firewalker registers list types for Int and Bytes, so `in $name` parses after any Int or Bytes value; Cloudflare only has IP lists (any Ip value), hostname lists (`http.host`), ASN lists (`ip.src.asnum`) and bulk redirect lists (`http.request.full_uri`), and rejects the rest with "cannot perform this operation on type …".',
    reference: '§1.8 List references',
    matches: (expr, ours, theirs) =>
      parseMismatch(ours, theirs, false) && /cannot perform this operation on type (Bytes|Int)$/.test(messageOf(ours)) && /\bin\s*\$[a-z0-9_.]/.test(scan(expr).code),
  },
  {
    id: 'escape-high-bytes',
    description:
      'This build decodes `\\xHH` / `\\OOO` escapes in strings as the code point U+00HH stored as UTF-8 (so `"\\xe9"` equals "é" and `"\\xc3\\xa9"` does not); the current engine makes each escape one byte. Evaluations of expressions with such escapes differ.',
    reference: '§1.4 (a) Quoted string (`\\xHH` → one byte; bytes 0x80..0xFF make the value non-UTF-8)',
    matches: (expr, ours, theirs) => ours.phase === 'eval' && theirs.phase === 'eval' && ours.result !== theirs.result && hasHighByteEscape(expr),
  },
  {
    id: 'nil-not-equal',
    description:
      "A comparison whose left side is missing (absent map key, index out of range, a function of a missing value) is false for every operator in Cloudflare; wirefilter's default makes `!=` true. Confirmed per case: compiled with `nilNotEqual: true` our result equals theirs.",
    reference: '§3.3 Missing values ("nil")',
    matches: (_expr, ours, theirs) =>
      ours.phase === 'eval' && theirs.phase === 'eval' && ours.result !== theirs.result && ours.nilNotEqual !== undefined && ours.nilNotEqual === theirs.result,
  },
  {
    id: 'url-decode-plus',
    description:
      "firewalker's `url_decode` patch only percent-decodes; Cloudflare's also turns `+` into a space. Differences when a value holds a `+`.",
    reference: '§5 Function catalog (`url_decode`: `%HH` and `+`→space)',
    matches: (expr, ours, theirs) =>
      ours.phase === 'eval' && theirs.phase === 'eval' && ours.result !== theirs.result && /url_decode\s*\(/.test(scan(expr).code) && fieldsContain(ours, /\+/),
  },
  {
    id: 'substring-panics',
    description:
      "firewalker's `substring` patch panics (an engine error here) when start >= end or end is past the value, e.g. `substring(x, 2)` on a 1-byte value; Cloudflare's slices within bounds.",
    reference: '§5 Function catalog (`substring`: byte slice [start, end), negative indexes count from the end)',
    matches: (expr, ours, theirs) =>
      ours.phase === 'eval' &&
      theirs.phase === 'eval' &&
      theirs.result === 'error' &&
      ours.result !== 'error' &&
      /substring\s*\(/.test(scan(expr).code) &&
      /panicked at '(Invalid index|range (start|end) index|slice index)/.test(messageOf(theirs)),
  },
  {
    id: 'substring-end-zero',
    description:
      "firewalker's `substring` patch reads an end index of 0 as \"until the end\" (it is also the default of the optional argument); Cloudflare's slice [start, 0) is empty.",
    reference: '§5 Function catalog (`substring(field, start [, end])`: byte slice [start, end))',
    matches: (expr, ours, theirs) =>
      ours.phase === 'eval' &&
      theirs.phase === 'eval' &&
      ours.result !== theirs.result &&
      callArgs(expr, 'substring').some((args) => args.length === 3 && /^(0+|0x0+)$/.test(args[2])),
  },
  {
    id: 'single-hex-byte',
    description:
      'This build reads a lone pair of hex digits where a Bytes literal is expected (`http.host eq 41`, `{"a" ab}`) as one byte; the current engine requires at least two bytes with separators, and we reject it there.',
    reference: '§1.4 (c) Hex byte string ("at least two bytes")',
    matches: (expr, ours, theirs) => {
      if (!parseMismatch(ours, theirs, false) || ours.phase !== 'parse') return false;
      // Our hex-bytes errors for a lone pair (`41`, or `7820.79` read as `78` + `20.79`).
      if (/^invalid-hex-bytes: expected (byte separator|1 characters, but found 0)$/.test(messageOf(ours))) return true;
      if (!ours.range) return false;
      const at = ours.range[0];
      const code = scan(expr).code;
      // Otherwise our error sits on the lone byte or on the token run into it
      // (`gt 08or ip.src` is reported at `ip.src`).
      return [...code.matchAll(/(?<![0-9A-Za-z_.:-])[0-9A-Fa-f]{2}(?![0-9A-Fa-f_.:-])/g)].some((m) => {
        const start = m.index ?? 0;
        const run = /^\S*\s*/.exec(code.slice(start + 2))?.[0].length ?? 0;
        return at >= start && at <= start + 2 + run;
      });
    },
  },
  {
    id: 'substring-negative-start',
    description:
      "firewalker's `substring` patch returns a missing value when a negative start reaches before the beginning (`substring(\"GB\", -3)`); lifted over `[*]` such elements are dropped. We clamp to the beginning, like Python slices.",
    reference: '§5 Function catalog (`substring`: negative indexes count from the end); §3.3 (missing values)',
    matches: (expr, ours, theirs) =>
      ours.phase === 'eval' &&
      theirs.phase === 'eval' &&
      ours.result !== theirs.result &&
      theirs.result !== 'error' &&
      callArgs(expr, 'substring').some((args) => {
        if (args.length < 2 || !/^-\d+$/.test(args[1])) return false;
        // Only when some value is shorter than |start| (or the source is shortened first).
        const reach = -Number(args[1]);
        return /(url_decode|remove_bytes)\s*\(/.test(args[0]) || shortestString(ours) < reach;
      }),
  },
  {
    id: 'true-pseudo-field',
    description: 'The whole expression `true` (match everything) is accepted by Cloudflare; firewalker does not register it ("unknown identifier").',
    reference: '§1.7 Booleans, §4.11 Pseudo-field',
    matches: (expr, ours, theirs) =>
      parseMismatch(ours, theirs, true) && /unknown identifier/.test(messageOf(theirs)) && errorAt(expr, theirs, offsets(expr, /(?<![A-Za-z0-9_.])true(?![A-Za-z0-9_.])/g), false),
  },
  {
    id: 'len-of-array',
    description: "firewalker's `len` takes Bytes only; Cloudflare's `len` also counts the elements of an array.",
    reference: '§5 Function catalog (`len(String|Bytes|Array) → Int`)',
    matches: (expr, ours, theirs) =>
      parseMismatch(ours, theirs, true) &&
      /len\s*\(/.test(scan(expr).code) &&
      /invalid type of argument #0: expected value of type \{Type\(Bytes\)\}, but got Array/.test(messageOf(theirs)),
  },
  {
    id: 'url-decode-options',
    description: "firewalker's `url_decode` has one parameter; Cloudflare's takes an optional options string (`\"r\"`, `\"u\"`).",
    reference: '§5 Function catalog (`url_decode(source String [, options String])`)',
    matches: (expr, ours, theirs) =>
      parseMismatch(ours, theirs, true) && /url_decode\s*\(/.test(scan(expr).code) && /invalid number of arguments/.test(messageOf(theirs)),
  },
];

/** The first known difference that explains this pair of outcomes, if any. */
export function explain(expr: string, ours: Outcome, theirs: Outcome): KnownDifference | undefined {
  return KNOWN_DIFFERENCES.find((d) => d.matches(expr, ours, theirs));
}
