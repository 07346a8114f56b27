// SQL-injection detection in the manner of libinjection (`@detectSQLi`), written clean-room
// from libinjection's data tables (sqlData.ts, generated from sqlparse_data.json) and its
// test vectors (tokens, folding, fingerprints), which pin the behaviour down.
//
// Pipeline: a tokenizer driven by a 256-entry character map turns the input (a binary
// string: one UTF-16 code unit per byte) into typed tokens; the folder collapses token
// sequences (arithmetic, unary operators, merged keywords such as "UNION ALL", ...) into at
// most 5 tokens; the token types form a fingerprint, looked up in libinjection's set of
// SQLi fingerprints, then a few false-positive rules are applied to short fingerprints.
// The input is tried as-is and as if it started inside a '...' or "..." string, with ANSI
// comments ("--x" is a comment) and, when the input has MySQL-only comment syntax, with
// MySQL ones ("#" starts a comment, "--x" is two minus signs).
//
// Pure: no I/O. Tables are built once when the module loads.
import { CHAR_CLASS, CHARMAP, FINGERPRINTS, KEYWORDS } from './sqlData';

// ---------------------------------------------------------------------------------------
// Flags and token types

export const FLAG_QUOTE_NONE = 1;
export const FLAG_QUOTE_SINGLE = 2;
export const FLAG_QUOTE_DOUBLE = 4;
export const FLAG_SQL_ANSI = 8;
export const FLAG_SQL_MYSQL = 16;

/** Token types (one character each, as they appear in fingerprints). */
export const T = {
  NONE: '',
  KEYWORD: 'k',
  UNION: 'U',
  GROUP: 'B',
  EXPRESSION: 'E',
  SQLTYPE: 't',
  FUNCTION: 'f',
  BAREWORD: 'n',
  NUMBER: '1',
  VARIABLE: 'v',
  STRING: 's',
  OPERATOR: 'o',
  LOGIC_OPERATOR: '&',
  COMMENT: 'c',
  COLLATE: 'A',
  LEFTPARENS: '(',
  RIGHTPARENS: ')',
  LEFTBRACE: '{',
  RIGHTBRACE: '}',
  DOT: '.',
  COMMA: ',',
  COLON: ':',
  SEMICOLON: ';',
  TSQL: 'T',
  UNKNOWN: '?',
  EVIL: 'X',
  BACKSLASH: '\\',
} as const;

export interface Token {
  /** One of T's values ('' when no token). */
  type: string;
  /** Offset in the input where the token's value starts. */
  pos: number;
  /** Length of `val`. */
  len: number;
  /** The value, truncated to 31 characters (strings: without their quotes). */
  val: string;
  /** Opening / closing quote of a string-like token ('' when none / unterminated). */
  strOpen: string;
  strClose: string;
  /** For variables: the number of leading '@' (0, 1 or 2). */
  count: number;
}

/** Longest token value kept (libinjection keeps 31 bytes plus a terminator). */
const VAL_MAX = 31;
const MAX_TOKENS = 5;

function newToken(): Token {
  return { type: '', pos: 0, len: 0, val: '', strOpen: '', strClose: '', count: 0 };
}

function clearToken(t: Token): void {
  t.type = '';
  t.pos = 0;
  t.len = 0;
  t.val = '';
  t.strOpen = '';
  t.strClose = '';
  t.count = 0;
}

function copyToken(dst: Token, src: Token): void {
  dst.type = src.type;
  dst.pos = src.pos;
  dst.len = src.len;
  dst.val = src.val;
  dst.strOpen = src.strOpen;
  dst.strClose = src.strClose;
  dst.count = src.count;
}

// ---------------------------------------------------------------------------------------
// Tables (built once)

/**
 * Keyword table, looked up without allocating: buckets by a case-folded FNV-1a hash of the
 * word, then a case-insensitive comparison (keywords are upper-case ASCII).
 */
const KW_WORDS: string[] = [];
const KW_TYPES: string[] = [];
const KW_BUCKETS = new Map<number, number[]>();

function foldedCode(c: number): number {
  return c >= 97 && c <= 122 ? c - 32 : c;
}

for (const line of KEYWORDS.split('\n')) {
  const word = line.slice(0, -1);
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
  const bucket = KW_BUCKETS.get(h);
  if (bucket) bucket.push(KW_WORDS.length);
  else KW_BUCKETS.set(h, [KW_WORDS.length]);
  KW_WORDS.push(word);
  KW_TYPES.push(line[line.length - 1]);
}

const FINGERPRINT_SET = new Set<string>(FINGERPRINTS.split(' ').map((f) => f.toUpperCase()));

/**
 * Keyword type of s[start, start + len), or of that followed by a space and `tail` when
 * `tail` is given (merged words such as "UNION ALL"); '' when not a keyword.
 */
function lookupRange(s: string, start: number, len: number, tail?: string): string {
  const total = tail === undefined ? len : len + 1 + tail.length;
  if (len === 0 || total > 32) return '';
  let h = 0x811c9dc5;
  for (let i = start; i < start + len; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7e) return '';
    h = Math.imul(h ^ foldedCode(c), 16777619);
  }
  if (tail !== undefined) {
    h = Math.imul(h ^ 0x20, 16777619);
    for (let i = 0; i < tail.length; i++) {
      const c = tail.charCodeAt(i);
      if (c > 0x7e) return '';
      h = Math.imul(h ^ foldedCode(c), 16777619);
    }
  }
  const bucket = KW_BUCKETS.get(h);
  if (bucket === undefined) return '';
  for (const k of bucket) {
    const w = KW_WORDS[k];
    if (w.length !== total) continue;
    let ok = true;
    for (let i = 0; i < len && ok; i++) ok = foldedCode(s.charCodeAt(start + i)) === w.charCodeAt(i);
    if (ok && tail !== undefined) {
      ok = w.charCodeAt(len) === 0x20;
      for (let i = 0; i < tail.length && ok; i++) ok = foldedCode(tail.charCodeAt(i)) === w.charCodeAt(len + 1 + i);
    }
    if (ok) return KW_TYPES[k];
  }
  return '';
}

/** Keyword type of a word (case-insensitive), '' when not a keyword. */
function lookupWord(word: string): string {
  return lookupRange(word, 0, word.length);
}

function byteSet(chars: string): Uint8Array {
  const set = new Uint8Array(256);
  for (let i = 0; i < chars.length; i++) set[chars.charCodeAt(i) & 0xff] = 1;
  return set;
}

/** Whitespace in libinjection's sense (includes NUL and the Latin-1 no-break space). */
const WHITE = byteSet(' \t\n\v\f\r\u00a0\u0000');
/** Characters that end a word. */
const WORD_END = byteSet(' []{}<>:\\?=@!#~+-*/&|^%(),\';\t\n\v\f\r"\u00a0\u0000');
/** Characters that end a variable name. */
const VAR_END = byteSet(' <>:\\?=@!#~+-*/&|^%(),\';\t\n\v\f\r\'`"');
const HEX = byteSet('0123456789ABCDEFabcdef');
const BIN = byteSet('01');
const MONEY = byteSet('0123456789.,');
const LETTERS = byteSet('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ');

function isWhite(c: number): boolean {
  return c < 256 && WHITE[c] === 1;
}

/** Length of the run of characters of `set` in s[from, to). */
function spanIn(s: string, from: number, to: number, set: Uint8Array): number {
  let i = from;
  while (i < to) {
    const c = s.charCodeAt(i);
    if (c > 255 || set[c] !== 1) break;
    i++;
  }
  return i - from;
}

/** Length of the run of characters not in `set` in s[from, to). */
function spanNotIn(s: string, from: number, to: number, set: Uint8Array): number {
  let i = from;
  while (i < to) {
    const c = s.charCodeAt(i);
    if (c < 256 && set[c] === 1) break;
    i++;
  }
  return i - from;
}

/** Index of the first "ab" pair starting in s[from, to) with both characters inside, or -1. */
function findPair(s: string, from: number, to: number, a: string, b: string): number {
  for (let i = from; i + 1 < to; i++) {
    if (s[i] === a && s[i + 1] === b) return i;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------
// Tokenizer

class Lexer {
  s: string;
  slen: number;
  flags: number;
  pos = 0;
  /** "--x" comments seen under ANSI rules, '#' seen: the input has MySQL comment syntax. */
  ddx = 0;
  hash = 0;
  /** Tokens produced so far. */
  tokens = 0;
  tok: Token = newToken();

  constructor(s: string, flags: number) {
    this.s = s;
    this.slen = s.length;
    this.flags = flags;
  }

  assign(type: string, pos: number, len: number): void {
    const t = this.tok;
    t.type = type;
    t.pos = pos;
    const n = len < VAL_MAX ? len : VAL_MAX;
    t.val = this.s.substr(pos, n);
    t.len = n;
  }

  assignChar(type: string, pos: number, ch: string): void {
    const t = this.tok;
    t.type = type;
    t.pos = pos;
    t.val = ch;
    t.len = 1;
  }

  /** Fills `tok` with the next token; false at the end of the input. */
  next(tok: Token): boolean {
    if (this.slen === 0) return false;
    this.tok = tok;
    clearToken(tok);
    if (this.pos === 0 && (this.flags & (FLAG_QUOTE_SINGLE | FLAG_QUOTE_DOUBLE)) !== 0) {
      // Pretend the input starts inside a string.
      const quote = this.flags & FLAG_QUOTE_SINGLE ? "'" : '"';
      this.pos = this.stringCore(0, quote, 0);
      this.tokens++;
      return true;
    }
    while (this.pos < this.slen) {
      const c = this.s.charCodeAt(this.pos);
      this.pos = DISPATCH[c < 256 ? c : 0x41 /* any non-byte: a word character */](this);
      if (tok.type !== '') {
        this.tokens++;
        return true;
      }
    }
    return false;
  }

  /**
   * A string whose opening quote `quote` is at pos + offset - 1 (offset 0: the input starts
   * inside the string). A quote preceded by an odd number of backslashes, or doubled, does
   * not close it.
   */
  stringCore(pos: number, quote: string, offset: number): number {
    const s = this.s;
    const slen = this.slen;
    const start = pos + offset;
    let from = start;
    for (;;) {
      const q = s.indexOf(quote, from);
      if (q < 0) {
        this.assign(T.STRING, start, slen - start);
        this.tok.strOpen = offset > 0 ? quote : '';
        this.tok.strClose = '';
        return slen;
      }
      let bs = 0;
      for (let i = q - 1; i >= start && s.charCodeAt(i) === 0x5c; i--) bs++;
      if (bs & 1) {
        from = q + 1;
        continue;
      }
      if (q + 1 < slen && s[q + 1] === quote) {
        from = q + 2;
        continue;
      }
      this.assign(T.STRING, start, q - start);
      this.tok.strOpen = offset > 0 ? quote : '';
      this.tok.strClose = quote;
      return q + 1;
    }
  }
}

type Parser = (lx: Lexer) => number;

const parseWhite: Parser = (lx) => lx.pos + 1;

const parseOperator1: Parser = (lx) => {
  lx.assignChar(T.OPERATOR, lx.pos, lx.s[lx.pos]);
  return lx.pos + 1;
};

const parseOther: Parser = (lx) => {
  lx.assignChar(T.UNKNOWN, lx.pos, lx.s[lx.pos]);
  return lx.pos + 1;
};

/** Single characters that are their own token type: ( ) { } , ; */
const parseChar: Parser = (lx) => {
  const ch = lx.s[lx.pos];
  lx.assignChar(ch, lx.pos, ch);
  return lx.pos + 1;
};

const parseEolComment: Parser = (lx) => {
  const nl = lx.s.indexOf('\n', lx.pos);
  if (nl < 0) {
    lx.assign(T.COMMENT, lx.pos, lx.slen - lx.pos);
    return lx.slen;
  }
  lx.assign(T.COMMENT, lx.pos, nl - lx.pos);
  return nl + 1;
};

const parseHash: Parser = (lx) => {
  lx.hash++;
  if (lx.flags & FLAG_SQL_MYSQL) {
    lx.hash++;
    return parseEolComment(lx);
  }
  lx.assignChar(T.OPERATOR, lx.pos, '#');
  return lx.pos + 1;
};

const parseDash: Parser = (lx) => {
  const { s, slen, pos } = lx;
  const dd = pos + 1 < slen && s[pos + 1] === '-';
  if (dd && pos + 2 < slen && isWhite(s.charCodeAt(pos + 2))) return parseEolComment(lx);
  if (dd && pos + 2 === slen) return parseEolComment(lx);
  if (dd && lx.flags & FLAG_SQL_ANSI) {
    // "--x": a comment for everyone but MySQL
    lx.ddx++;
    return parseEolComment(lx);
  }
  lx.assignChar(T.OPERATOR, pos, '-');
  return pos + 1;
};

const parseSlash: Parser = (lx) => {
  const { s, slen, pos } = lx;
  if (pos + 1 === slen || s[pos + 1] !== '*') return parseOperator1(lx);
  const end = findPair(s, pos + 2, slen, '*', '/');
  const clen = end < 0 ? slen - pos : end + 2 - pos;
  let type: string = T.COMMENT;
  if (end >= 0 && findPair(s, pos + 2, end + 1, '/', '*') >= 0) {
    // a nested comment: PostgreSQL nests them, others don't -- ambiguous, so evil
    type = T.EVIL;
  } else if (pos + 2 < slen && s[pos + 2] === '!') {
    // MySQL's executable comment /*! ... */
    type = T.EVIL;
  }
  lx.assign(type, pos, clen);
  return pos + clen;
};

const parseBackslash: Parser = (lx) => {
  const { s, slen, pos } = lx;
  if (pos + 1 < slen && s[pos + 1] === 'N') {
    // MySQL's \N is NULL
    lx.assign(T.NUMBER, pos, 2);
    return pos + 2;
  }
  lx.assignChar(T.BACKSLASH, pos, '\\');
  return pos + 1;
};

const parseOperator2: Parser = (lx) => {
  const { s, slen, pos } = lx;
  if (pos + 1 >= slen) return parseOperator1(lx);
  if (pos + 2 < slen && s[pos] === '<' && s[pos + 1] === '=' && s[pos + 2] === '>') {
    lx.assign(T.OPERATOR, pos, 3);
    return pos + 3;
  }
  const type = lookupRange(s, pos, 2);
  if (type !== '') {
    lx.assign(type, pos, 2);
    return pos + 2;
  }
  if (s[pos] === ':') {
    lx.assignChar(T.COLON, pos, ':');
    return pos + 1;
  }
  return parseOperator1(lx);
};

const parseString: Parser = (lx) => lx.stringCore(lx.pos, lx.s[lx.pos], 1);

const parseWord: Parser = (lx) => {
  const { s, slen, pos } = lx;
  const wlen = spanNotIn(s, pos, slen, WORD_END);
  lx.assign(T.BAREWORD, pos, wlen);
  const val = lx.tok.val;
  // "SELECT.1", "SELECT`col`": a keyword before a '.' or '`' is a token of its own
  for (let i = 0; i < val.length; i++) {
    const c = val[i];
    if (c === '.' || c === '`') {
      const type = lookupRange(val, 0, i);
      if (type !== '' && type !== T.BAREWORD) {
        clearToken(lx.tok);
        lx.assign(type, pos, i);
        return pos + i;
      }
    }
  }
  if (wlen <= VAL_MAX) {
    const type = lookupWord(val);
    lx.tok.type = type === '' ? T.BAREWORD : type;
  }
  return pos + wlen;
};

const parseTick: Parser = (lx) => {
  const pos = lx.stringCore(lx.pos, '`', 1);
  // MySQL: everything in backquotes is a name, except that `f`() stays a function call
  lx.tok.type = lookupWord(lx.tok.val) === T.FUNCTION ? T.FUNCTION : T.BAREWORD;
  return pos;
};

const parseVar: Parser = (lx) => {
  const { s, slen } = lx;
  const start = lx.pos;
  let pos = start + 1;
  if (pos < slen && s[pos] === '@') {
    pos++;
    lx.tok.count = 2;
  } else {
    lx.tok.count = 1;
  }
  if (pos < slen) {
    const c = s[pos];
    if (c === '`') {
      lx.pos = pos;
      const end = parseTick(lx);
      lx.tok.type = T.VARIABLE;
      return end;
    }
    if (c === "'" || c === '"') {
      lx.pos = pos;
      const end = parseString(lx);
      lx.tok.type = T.VARIABLE;
      return end;
    }
  }
  const xlen = spanNotIn(s, pos, slen, VAR_END);
  lx.assign(T.VARIABLE, pos, xlen);
  return pos + xlen;
};

const parseMoney: Parser = (lx) => {
  const { s, slen, pos } = lx;
  if (pos + 1 === slen) {
    lx.assignChar(T.BAREWORD, pos, '$');
    return slen;
  }
  const xlen = spanIn(s, pos + 1, slen, MONEY);
  if (xlen === 0) {
    if (s[pos + 1] === '$') {
      // $$ ... $$ (PostgreSQL dollar quoting with an empty tag)
      const end = findPair(s, pos + 2, slen, '$', '$');
      if (end < 0) {
        lx.assign(T.STRING, pos + 2, slen - (pos + 2));
        lx.tok.strOpen = '$';
        lx.tok.strClose = '';
        return slen;
      }
      lx.assign(T.STRING, pos + 2, end - (pos + 2));
      lx.tok.strOpen = '$';
      lx.tok.strClose = '$';
      return end + 2;
    }
    // $tag$ ... $tag$
    const tlen = spanIn(s, pos + 1, slen, LETTERS);
    if (tlen === 0 || pos + tlen + 1 === slen || s[pos + tlen + 1] !== '$') {
      lx.assignChar(T.BAREWORD, pos, '$');
      return pos + 1;
    }
    const tag = s.substr(pos, tlen + 2);
    const bodyStart = pos + tlen + 2;
    const end = s.indexOf(tag, bodyStart);
    if (end < 0) {
      lx.assign(T.STRING, bodyStart, slen - bodyStart);
      lx.tok.strOpen = '$';
      lx.tok.strClose = '';
      return slen;
    }
    lx.assign(T.STRING, bodyStart, end - bodyStart);
    lx.tok.strOpen = '$';
    lx.tok.strClose = '$';
    return end + tlen + 2;
  }
  if (xlen === 1 && s[pos + 1] === '.') return parseWord(lx); // "$." is not money
  lx.assign(T.NUMBER, pos, 1 + xlen);
  return pos + 1 + xlen;
};

const parseNumber: Parser = (lx) => {
  const { s, slen } = lx;
  let pos = lx.pos;
  if (s[pos] === '0' && pos + 1 < slen) {
    const c = s[pos + 1];
    const digits = c === 'x' || c === 'X' ? HEX : c === 'b' || c === 'B' ? BIN : null;
    if (digits !== null) {
      const xlen = spanIn(s, pos + 2, slen, digits);
      if (xlen === 0) {
        lx.assign(T.BAREWORD, pos, 2);
        return pos + 2;
      }
      lx.assign(T.NUMBER, pos, 2 + xlen);
      return pos + 2 + xlen;
    }
  }
  const start = pos;
  while (pos < slen && isDigitAt(s, pos)) pos++;
  if (pos < slen && s[pos] === '.') {
    pos++;
    while (pos < slen && isDigitAt(s, pos)) pos++;
    if (pos - start === 1) {
      lx.assignChar(T.DOT, start, '.');
      return pos;
    }
  }
  let haveE = false;
  let haveExp = false;
  if (pos < slen && (s[pos] === 'E' || s[pos] === 'e')) {
    haveE = true;
    pos++;
    if (pos < slen && (s[pos] === '+' || s[pos] === '-')) pos++;
    while (pos < slen && isDigitAt(s, pos)) {
      haveExp = true;
      pos++;
    }
  }
  // Oracle's float/double suffixes: 1.5f, 2d
  if (pos < slen) {
    const c = s[pos];
    if (c === 'd' || c === 'D' || c === 'f' || c === 'F') {
      if (pos + 1 === slen) pos++;
      else {
        const n = s.charCodeAt(pos + 1);
        if (isWhite(n) || n === 0x3b /* ; */ || n === 0x75 /* u */ || n === 0x55 /* U */) pos++;
      }
    }
  }
  // "1E", "10.e": not a number but a word
  lx.assign(haveE && !haveExp ? T.BAREWORD : T.NUMBER, start, pos - start);
  return pos;
};

function isDigitAt(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
}

/** MS-SQL [bracketed name]. */
const parseBword: Parser = (lx) => {
  const { s, slen, pos } = lx;
  const end = s.indexOf(']', pos);
  if (end < 0) {
    lx.assign(T.BAREWORD, pos, slen - pos);
    return slen;
  }
  lx.assign(T.BAREWORD, pos, end - pos + 1);
  return end + 1;
};

/** b'0101' (offset 0), x'FF': numbers; anything else: a word. */
function prefixedNumber(lx: Lexer, set: Uint8Array): number {
  const { s, slen, pos } = lx;
  if (pos + 2 >= slen || s[pos + 1] !== "'") return parseWord(lx);
  const wlen = spanIn(s, pos + 2, slen, set);
  if (pos + 2 + wlen >= slen || s[pos + 2 + wlen] !== "'") return parseWord(lx);
  lx.assign(T.NUMBER, pos, wlen + 3);
  return pos + 2 + wlen + 1;
}

const parseBstring: Parser = (lx) => prefixedNumber(lx, BIN);
const parseXstring: Parser = (lx) => prefixedNumber(lx, HEX);

/** E'...' (PostgreSQL escape string), N'...' (national string): a plain string. */
const parseEstring: Parser = (lx) => {
  const { s, slen, pos } = lx;
  if (pos + 2 >= slen || s[pos + 1] !== "'") return parseWord(lx);
  return lx.stringCore(pos, "'", 2);
};

/** U&'...' (PostgreSQL unicode string). */
const parseUstring: Parser = (lx) => {
  const { s, slen, pos } = lx;
  if (pos + 2 < slen && s[pos + 1] === '&' && s[pos + 2] === "'") {
    lx.pos += 2;
    const end = parseString(lx);
    lx.tok.strOpen = 'u';
    if (lx.tok.strClose === "'") lx.tok.strClose = 'u';
    return end;
  }
  return parseWord(lx);
};

/** Oracle q'<delim>...<delim>' strings, with the q at lx.pos + offset. */
function qstring(lx: Lexer, offset: number): number {
  const { s, slen } = lx;
  const pos = lx.pos + offset;
  if (pos >= slen || (s[pos] !== 'q' && s[pos] !== 'Q') || pos + 2 >= slen || s[pos + 1] !== "'") {
    return parseWord(lx);
  }
  let ch = s[pos + 2];
  if (s.charCodeAt(pos + 2) < 33) return parseWord(lx);
  if (ch === '(') ch = ')';
  else if (ch === '[') ch = ']';
  else if (ch === '{') ch = '}';
  else if (ch === '<') ch = '>';
  const end = findPair(s, pos + 3, slen, ch, "'");
  if (end < 0) {
    lx.assign(T.STRING, pos + 3, slen - pos - 3);
    lx.tok.strOpen = 'q';
    lx.tok.strClose = '';
    return slen;
  }
  lx.assign(T.STRING, pos + 3, end - (pos + 3));
  lx.tok.strOpen = 'q';
  lx.tok.strClose = 'q';
  return end + 2;
}

const parseQstring: Parser = (lx) => qstring(lx, 0);

const parseNqstring: Parser = (lx) => {
  const { s, slen, pos } = lx;
  if (pos + 2 < slen && s[pos + 1] === "'") return parseEstring(lx);
  return qstring(lx, 1);
};

const PARSERS: Record<keyof typeof CHAR_CLASS, Parser> = {
  BACK: parseBackslash,
  BANG: parseOperator2,
  BSTRING: parseBstring,
  BWORD: parseBword,
  COMMA: parseChar,
  DASH: parseDash,
  ESTRING: parseEstring,
  HASH: parseHash,
  LEFTBRACE: parseChar,
  LEFTPARENS: parseChar,
  MONEY: parseMoney,
  NQSTRING: parseNqstring,
  NUM: parseNumber,
  OP1: parseOperator1,
  OP2: parseOperator2,
  OTHER: parseOther,
  QSTRING: parseQstring,
  RIGHTBRACE: parseChar,
  RIGHTPARENS: parseChar,
  SEMICOLON: parseChar,
  SLASH: parseSlash,
  STR: parseString,
  TICK: parseTick,
  UNARY: parseOperator1,
  USTRING: parseUstring,
  VAR: parseVar,
  WHITE: parseWhite,
  WORD: parseWord,
  XSTRING: parseXstring,
};

const DISPATCH: Parser[] = (() => {
  const byLetter = new Map<string, Parser>();
  for (const [name, letter] of Object.entries(CHAR_CLASS)) {
    byLetter.set(letter, PARSERS[name as keyof typeof CHAR_CLASS]);
  }
  const out: Parser[] = [];
  for (let i = 0; i < 256; i++) {
    const p = byLetter.get(CHARMAP[i]);
    if (p === undefined) throw new Error(`no parser for byte ${i}`);
    out.push(p);
  }
  return out;
})();

/** All tokens of the input, unfolded. Default flags: no quote context, ANSI comments. */
export function tokenize(input: string, flags: number = FLAG_QUOTE_NONE | FLAG_SQL_ANSI): Token[] {
  const lx = new Lexer(input, flags);
  const out: Token[] = [];
  for (;;) {
    const t = newToken();
    if (!lx.next(t)) break;
    out.push(t);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Folding

/** Where the folder takes its tokens from: the lexer, or a list of tokens. */
interface TokenSource {
  next(tok: Token): boolean;
  /** Tokens handed out so far. */
  tokens: number;
}

class ListSource implements TokenSource {
  tokens = 0;
  private i = 0;
  constructor(private readonly list: readonly Token[]) {}
  next(tok: Token): boolean {
    if (this.i >= this.list.length) {
      clearToken(tok);
      return false;
    }
    copyToken(tok, this.list[this.i++]);
    this.tokens++;
    return true;
  }
}

function isUnaryOp(t: Token): boolean {
  if (t.type !== T.OPERATOR) return false;
  const v = t.val;
  switch (v.length) {
    case 1:
      return v === '+' || v === '-' || v === '!' || v === '~';
    case 2:
      return v === '!!';
    case 3:
      return v.toUpperCase() === 'NOT';
    default:
      return false;
  }
}

function isArithmeticOp(t: Token): boolean {
  if (t.type !== T.OPERATOR || t.len !== 1) return false;
  const v = t.val;
  return v === '*' || v === '/' || v === '-' || v === '+' || v === '%';
}

const MERGE_FIRST = new Set<string>(['k', 'n', 'o', 'U', 'f', 'E', 'T', 't']);
const MERGE_SECOND = new Set<string>(['k', 'n', 'o', 'U', 'f', 'E', 'T', 't', '&']);

/** "UNION" "ALL" -> "UNION ALL" when the pair is itself a keyword (a is updated). */
function mergeWords(a: Token, b: Token): boolean {
  if (!MERGE_FIRST.has(a.type) || !MERGE_SECOND.has(b.type)) return false;
  const len = a.len + b.len + 1;
  if (len > VAL_MAX) return false;
  const type = lookupRange(a.val, 0, a.len, b.val);
  if (type === '') return false;
  a.type = type;
  a.val = a.val + ' ' + b.val;
  a.len = len;
  return true;
}

/** Bare words and variables that act as functions when followed by '('. */
const CALLABLE_WORDS = new Set<string>([
  'USER_ID', 'USER_NAME', 'DATABASE', 'PASSWORD', 'USER', 'CURRENT_USER', 'CURRENT_DATE',
  'CURRENT_TIME', 'CURRENT_TIMESTAMP', 'LOCALTIME', 'LOCALTIMESTAMP',
]);

/** Is the token's type one of the type characters in `types`? */
function is(t: Token, types: string): boolean {
  return t.type.length === 1 && types.includes(t.type);
}

/**
 * Folds the tokens from `src` into `vec` (at least 8 slots); returns how many of them make
 * the fingerprint (at most 5). `lastComment` is scratch space.
 */
function foldInto(src: TokenSource, vec: Token[], lastComment: Token): number {
  let pos = 0; // where the next token goes
  let left = 0; // tokens already final
  let more = true;
  clearToken(lastComment);

  // Leading comments, '(' , SQL types and unary operators say nothing: skip them.
  for (;;) {
    more = src.next(vec[0]);
    if (!more) return 0;
    const t = vec[0];
    if (!(t.type === T.COMMENT || t.type === T.LEFTPARENS || t.type === T.SQLTYPE || isUnaryOp(t))) break;
  }
  pos = 1;

  /** Reads tokens until there are `want` unfolded ones (comments are set aside). */
  const fill = (want: number): void => {
    while (more && pos <= MAX_TOKENS && pos - left < want) {
      const t = vec[pos];
      more = src.next(t);
      if (more) {
        if (t.type === T.COMMENT) copyToken(lastComment, t);
        else {
          lastComment.type = '';
          pos++;
        }
      }
    }
  };

  for (;;) {
    if (pos >= MAX_TOKENS) {
      // Some 5-token shapes are folded further: "1o(1)", "n o(n)", "1),(1", "n)o(n"
      const [a, b, c, d, e] = vec;
      if (
        (a.type === T.NUMBER && is(b, 'o,') && c.type === T.LEFTPARENS &&
          d.type === T.NUMBER && e.type === T.RIGHTPARENS) ||
        (a.type === T.BAREWORD && b.type === T.OPERATOR && c.type === T.LEFTPARENS &&
          is(d, 'n1') && e.type === T.RIGHTPARENS) ||
        (a.type === T.NUMBER && b.type === T.RIGHTPARENS && c.type === T.COMMA &&
          d.type === T.LEFTPARENS && e.type === T.NUMBER) ||
        (a.type === T.BAREWORD && b.type === T.RIGHTPARENS && c.type === T.OPERATOR &&
          d.type === T.LEFTPARENS && e.type === T.BAREWORD)
      ) {
        if (pos > MAX_TOKENS) {
          copyToken(vec[1], vec[MAX_TOKENS]);
          pos = 2;
        } else {
          pos = 1;
        }
        left = 0;
      }
    }

    if (!more || left >= MAX_TOKENS) {
      left = pos;
      break;
    }

    // --- two-token folds
    fill(2);
    if (pos - left < 2) {
      left = pos;
      continue;
    }
    const a = vec[left];
    const b = vec[left + 1];

    if (a.type === T.STRING && b.type === T.STRING) {
      pos -= 1; // "foo" "bar": adjacent strings concatenate
      continue;
    }
    if (a.type === T.SEMICOLON && b.type === T.SEMICOLON) {
      pos -= 1;
      continue;
    }
    if (is(a, 'o&') && (isUnaryOp(b) || b.type === T.SQLTYPE)) {
      pos -= 1; // "+ -", "AND NOT", "+ BINARY"
      left = 0;
      continue;
    }
    if (a.type === T.LEFTPARENS && isUnaryOp(b)) {
      pos -= 1;
      if (left > 0) left -= 1;
      continue;
    }
    if (mergeWords(a, b)) {
      pos -= 1;
      if (left > 0) left -= 1;
      continue;
    }
    if (a.type === T.SEMICOLON && b.type === T.FUNCTION && b.val.length >= 2 &&
        (b.val[0] === 'I' || b.val[0] === 'i') && (b.val[1] === 'F' || b.val[1] === 'f')) {
      b.type = T.TSQL; // "; IF ..." is Transact-SQL control flow
      continue;
    }
    if (is(a, 'nv') && b.type === T.LEFTPARENS && CALLABLE_WORDS.has(a.val.toUpperCase())) {
      a.type = T.FUNCTION;
      continue;
    }
    if (a.type === T.KEYWORD && (a.len === 2 || a.len === 6) && /^(?:NOT )?IN$/i.test(a.val)) {
      // "x IN (...)" is an operator; "IN" otherwise (IN BOOLEAN MODE was merged before) is nothing
      a.type = b.type === T.LEFTPARENS ? T.OPERATOR : T.BAREWORD;
      continue;
    }
    if (a.type === T.OPERATOR && (a.len === 4 || a.len === 8) && /^(?:NOT )?LIKE$/i.test(a.val)) {
      if (b.type === T.LEFTPARENS) a.type = T.FUNCTION; // LIKE(...) is a function
      // no fold: fall through to the three-token folds
    } else if (a.type === T.SQLTYPE && is(b, 'n1t(fvs')) {
      copyToken(a, b); // "BINARY 1", "DOUBLE PRECISION '1'": drop the type
      pos -= 1;
      left = 0;
      continue;
    } else if (a.type === T.COLLATE && b.type === T.BAREWORD) {
      if (b.val.includes('_')) {
        b.type = T.SQLTYPE; // collation names: latin1_general_ci
        left = 0;
      }
    } else if (a.type === T.BACKSLASH) {
      if (isArithmeticOp(b)) a.type = T.NUMBER; // TSQL reads "\%1" as "0 % 1"
      else {
        copyToken(a, b); // and "\1" as "1"
        pos -= 1;
      }
      left = 0;
      continue;
    } else if (a.type === T.LEFTPARENS && b.type === T.LEFTPARENS) {
      pos -= 1;
      left = 0;
      continue;
    } else if (a.type === T.RIGHTPARENS && b.type === T.RIGHTPARENS) {
      pos -= 1;
      left = 0;
      continue;
    } else if (a.type === T.LEFTBRACE && b.type === T.BAREWORD) {
      if (b.len === 0) {
        // MySQL's degenerate {``.``.id}: give up, it is evil
        b.type = T.EVIL;
        return left + 2;
      }
      // ODBC {fn expr} -> expr
      left = 0;
      pos -= 2;
      continue;
    } else if (b.type === T.RIGHTBRACE) {
      pos -= 1;
      left = 0;
      continue;
    }

    // --- three-token folds
    fill(3);
    if (pos - left < 3) {
      left = pos;
      continue;
    }
    const x = vec[left];
    const y = vec[left + 1];
    const z = vec[left + 2];

    if (x.type === T.NUMBER && y.type === T.OPERATOR && z.type === T.NUMBER) {
      pos -= 2; // 1+1 -> 1
      left = 0;
      continue;
    }
    if (x.type === T.OPERATOR && y.type !== T.LEFTPARENS && z.type === T.OPERATOR) {
      left = 0;
      pos -= 2;
      continue;
    }
    if (x.type === T.LOGIC_OPERATOR && z.type === T.LOGIC_OPERATOR) {
      pos -= 2;
      left = 0;
      continue;
    }
    if (x.type === T.VARIABLE && y.type === T.OPERATOR && is(z, 'v1n')) {
      pos -= 2;
      left = 0;
      continue;
    }
    if (is(x, 'n1') && y.type === T.OPERATOR && is(z, '1n')) {
      pos -= 2;
      left = 0;
      continue;
    }
    if (is(x, 'n1vs') && y.type === T.OPERATOR && y.val === '::' && z.type === T.SQLTYPE) {
      pos -= 2; // '1'::money -> '1'
      left = 0;
      continue;
    }
    if (is(x, 'n1sv') && y.type === T.COMMA && is(z, 'n1sv')) {
      pos -= 2; // 1,2 -> 1
      left = 0;
      continue;
    }
    if (is(x, 'EB,') && isUnaryOp(y) && z.type === T.LEFTPARENS) {
      copyToken(y, z); // SELECT + ( -> SELECT (
      pos -= 1;
      left = 0;
      continue;
    }
    if (is(x, 'kEB') && isUnaryOp(y) && is(z, 'n1svf')) {
      copyToken(y, z); // SELECT - 1 -> SELECT 1
      pos -= 1;
      left = 0;
      continue;
    }
    if (x.type === T.COMMA && isUnaryOp(y) && is(z, 'n1sv')) {
      copyToken(y, z); // ", -1" -> ", 1" then back up: "1,-1" -> "1"
      left = 0;
      pos -= 3;
      continue;
    }
    if (x.type === T.COMMA && isUnaryOp(y) && z.type === T.FUNCTION) {
      copyToken(y, z); // 1,-sin(1) -> 1,sin(1)
      pos -= 1;
      left = 0;
      continue;
    }
    if (x.type === T.BAREWORD && y.type === T.DOT && z.type === T.BAREWORD) {
      pos -= 2; // db.table -> db
      left = 0;
      continue;
    }
    if (x.type === T.EXPRESSION && y.type === T.DOT && z.type === T.BAREWORD) {
      copyToken(y, z); // SELECT . `foo` -> SELECT `foo`
      pos -= 1;
      left = 0;
      continue;
    }
    if (x.type === T.FUNCTION && y.type === T.LEFTPARENS && z.type !== T.RIGHTPARENS) {
      // USER() is a function; USER(x) is not
      if (x.val.toUpperCase() === 'USER') x.type = T.BAREWORD;
    }

    // nothing folds: the left-most token is final
    left += 1;
  }

  // a trailing comment counts when there is room for it
  if (left < MAX_TOKENS && lastComment.type === T.COMMENT) {
    copyToken(vec[left], lastComment);
    left += 1;
  }
  // a 6th token may have been read to decide on the 5th
  return left > MAX_TOKENS ? MAX_TOKENS : left;
}

function newVec(): Token[] {
  const v: Token[] = [];
  for (let i = 0; i < MAX_TOKENS + 3; i++) v.push(newToken());
  return v;
}

/** Folds a token list (as tokenize returns it) into at most 5 tokens. */
export function fold(tokens: readonly Token[]): Token[] {
  const vec = newVec();
  const n = foldInto(new ListSource(tokens), vec, newToken());
  return vec.slice(0, n);
}

// ---------------------------------------------------------------------------------------
// Fingerprints and detection

/** Scratch state reused across calls (the detector is synchronous and not reentrant). */
const VEC = newVec();
const LAST_COMMENT = newToken();

interface Analysis {
  fingerprint: string;
  /** Tokens read by the tokenizer. */
  tokens: number;
  /** The input has MySQL-only comment syntax ('#', "--x"): worth a second look as MySQL. */
  mysqlComments: boolean;
}

function analyse(input: string, flags: number): Analysis {
  const lx = new Lexer(input, flags);
  let n = foldInto(lx, VEC, LAST_COMMENT);
  // PHP-style trailing unterminated empty backquote: a comment
  if (n > 2) {
    const last = VEC[n - 1];
    if (last.type === T.BAREWORD && last.strOpen === '`' && last.len === 0 && last.strClose === '') {
      last.type = T.COMMENT;
    }
  }
  let fp = '';
  for (let i = 0; i < n; i++) fp += VEC[i].type;
  if (fp.includes(T.EVIL)) {
    // could not be parsed reliably (nested or MySQL executable comments): evil as a whole
    fp = T.EVIL;
    n = 1;
    clearToken(VEC[0]);
    VEC[0].type = T.EVIL;
    VEC[0].val = T.EVIL;
    VEC[0].len = 1;
    clearToken(VEC[1]);
  }
  return { fingerprint: fp, tokens: lx.tokens, mysqlComments: lx.ddx > 0 || lx.hash > 0 };
}

/** The fingerprint (folded token types, at most 5) of the input under the given flags. */
export function fingerprint(input: string, flags: number = FLAG_QUOTE_NONE | FLAG_SQL_ANSI): string {
  return analyse(input, flags).fingerprint;
}

/** Is the fingerprint in libinjection's set (compared case-insensitively, as it does)? */
export function isKnownFingerprint(fp: string): boolean {
  return fp.length > 0 && FINGERPRINT_SET.has(fp.toUpperCase());
}

/**
 * The false-positive rules applied to a known fingerprint (VEC holds its tokens): true when
 * it still counts as SQL injection.
 */
function stillSqli(input: string, a: Analysis): boolean {
  const fp = a.fingerprint;
  const n = fp.length;
  const t0 = VEC[0];
  const t1 = VEC[1];
  if (n > 1 && fp[n - 1] === T.COMMENT && input.includes('sp_password')) {
    return true; // MS-SQL leaves statements mentioning sp_password out of its audit log
  }
  if (n === 2) {
    if (fp[1] === T.UNION) return a.tokens !== 2; // plain "1 union" is common text
    if (t1.val[0] === '#') return false; // '#' comments: too many false positives
    if (t0.type === T.BAREWORD && t1.type === T.COMMENT && t1.val[0] !== '/') return false; // "foo--"
    if (t0.type === T.NUMBER && t1.type === T.COMMENT) {
      if (t1.val[0] === '/') return true; // "1/*"
      if (a.tokens > 2) return true; // something was folded: "1*1--"
      // only a true number followed by a blank, "/*" or "--": "1234 --", not "1234-ABCD--"
      const ch = t0.len < input.length ? input.charCodeAt(t0.len) : 0;
      if (ch <= 32) return true;
      const ch2 = input[t0.len + 1];
      if (ch === 0x2f && ch2 === '*') return true;
      if (ch === 0x2d && ch2 === '-') return true;
      return false;
    }
    // "xxx-- foo": plain text with a dash comment, only "--" at the very end counts
    if (t1.len > 2 && t1.val[0] === '-') return false;
    return true;
  }
  if (n === 3) {
    if (fp === 'sos' || fp === 's&s') {
      // ...foo' + 'bar...: unquoted at both ends, same quote in the middle
      const t2 = VEC[2];
      return t0.strOpen === '' && t2.strClose === '' && t0.strClose === t2.strOpen;
    }
    if (fp === 's&n' || fp === 'n&1' || fp === '1&1' || fp === '1&v' || fp === '1&s') {
      return a.tokens !== 3; // "sexy and 17" is not SQLi, "sexy and 17<18" is
    }
    if (t1.type === T.KEYWORD) {
      // only "INTO OUTFILE" / "INTO DUMPFILE" count
      return t1.len >= 5 && t1.val.slice(0, 4).toUpperCase() === 'INTO';
    }
  }
  return true;
}

function check(input: string, flags: number): { hit: boolean; a: Analysis } {
  const a = analyse(input, flags);
  const hit = isKnownFingerprint(a.fingerprint) && stillSqli(input, a);
  return { hit, a };
}

/**
 * libinjection's SQLi check. `input` is a binary string (one code unit per byte). Tries the
 * input as-is, then as if it followed a single quote, then a double quote; each under ANSI
 * comment rules and, when the input uses MySQL comment syntax, MySQL's. `fingerprint` is
 * the matching fingerprint, or (not SQLi) the last one computed ('' for an empty input).
 */
export function detectSQLi(input: string): { isSqli: boolean; fingerprint: string } {
  if (input.length === 0) return { isSqli: false, fingerprint: '' };
  let last = '';
  for (const quote of [FLAG_QUOTE_NONE, FLAG_QUOTE_SINGLE]) {
    if (quote === FLAG_QUOTE_SINGLE && !input.includes("'")) continue;
    const r = check(input, quote | FLAG_SQL_ANSI);
    last = r.a.fingerprint;
    if (r.hit) return { isSqli: true, fingerprint: last };
    if (r.a.mysqlComments) {
      const m = check(input, quote | FLAG_SQL_MYSQL);
      last = m.a.fingerprint;
      if (m.hit) return { isSqli: true, fingerprint: last };
    }
  }
  if (input.includes('"')) {
    const r = check(input, FLAG_QUOTE_DOUBLE | FLAG_SQL_MYSQL);
    last = r.a.fingerprint;
    if (r.hit) return { isSqli: true, fingerprint: last };
  }
  return { isSqli: false, fingerprint: last };
}
