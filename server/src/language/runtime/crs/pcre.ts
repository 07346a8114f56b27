/**
 * PCRE patterns (as CRS writes them for ModSecurity) translated to JavaScript RegExp
 * source that runs on binary strings (one code unit per byte, no `u` flag).
 *
 * Translated:
 * - Option settings `(?i)` `(?s)` `(?m)` `(?-i)` apply to the rest of the enclosing group
 *   (or pattern), `(?i:…)` to the group, as in PCRE. Case-insensitivity is ASCII only, as
 *   PCRE's in byte mode: letters become `[aA]` classes and class ranges get their other
 *   case (the JS `i` flag is never used: it would also fold Latin-1 bytes such as
 *   0xC3/0xE3). `.` becomes `[\s\S]` under `(?s)`.
 * - Compiled as ModSecurity 2 compiles `@rx` (PCRE_DOTALL | PCRE_DOLLAR_ENDONLY; v3 has
 *   DOTALL too): `.` is any byte (`[^\n]` after `(?-s)`), `$` the very end; `\Z` is "end,
 *   or before a final \n" (`(?=\n?$)`), `\z` and `\A` the absolute ends; with `(?m)`,
 *   `^` and `$` also match after / before each \n.
 * - Possessive quantifiers (`X*+ X++ X?+ X{n,m}+`) and atomic groups `(?>X)` become
 *   `(?=(?<__aN>X*))\k<__aN>` (a JS lookahead is atomic). In a pattern with numbered
 *   back-references (whose numbers the extra groups would shift) they lose their
 *   possessiveness instead, noted in `notes`: the pattern may then match where PCRE gives
 *   up, never the other way round.
 * - Escapes: `\x{hh}` -> `\xhh` (code points above FF cannot be bytes: an error), `\e`
 *   `\a`, octal `\0nn` / `\o{…}`, `\h \H \v \V \R \s \S` with PCRE's byte meanings (`\s`
 *   is ASCII white space only; JS would add 0xA0), `\Q…\E` quoting, `(?#…)` comments,
 *   `(?P<name>…)` named groups, POSIX classes `[[:alpha:]]`, and `]` first in a class.
 * - Not translatable (reported): `\G`, `\K`, `\X`, `\C`, `\p{…}`, recursion `(?R)`,
 *   `(?1)`, conditionals `(?(…)…)`, `(?x)`, verbs `(*…)`.
 */

export type PcreResult = { readonly ok: true; readonly source: string; readonly flags: string; readonly notes: readonly string[] } | { readonly ok: false; readonly message: string };

const POSIX: Readonly<Record<string, string>> = {
  alpha: 'A-Za-z',
  digit: '0-9',
  alnum: '0-9A-Za-z',
  upper: 'A-Z',
  lower: 'a-z',
  space: '\\t-\\r ',
  blank: '\\t ',
  punct: '!-\\/:-@\\[-`{-~',
  xdigit: '0-9A-Fa-f',
  word: '0-9A-Za-z_',
  cntrl: '\\x00-\\x1f\\x7f',
  print: ' -~',
  graph: '!-~',
  ascii: '\\x00-\\x7f',
};

const hex2 = (n: number): string => '\\x' + n.toString(16).padStart(2, '0');

class Fail extends Error {}

interface Scope {
  i: boolean;
  s: boolean;
  m: boolean;
}

export function translatePcre(pattern: string): PcreResult {
  try {
    return new Translator(pattern).run();
  } catch (e) {
    if (e instanceof Fail) return { ok: false, message: e.message };
    throw e;
  }
}

/** Compiles a PCRE pattern to a RegExp, or returns the reason it cannot. */
export function compilePcre(pattern: string, extraFlags = ''): { ok: true; regex: RegExp; notes: readonly string[] } | { ok: false; message: string } {
  const t = translatePcre(pattern);
  if (!t.ok) return t;
  try {
    let flags = t.flags;
    for (const f of extraFlags) if (!flags.includes(f)) flags += f;
    return { ok: true, regex: new RegExp(t.source, flags), notes: t.notes };
  } catch (e) {
    return { ok: false, message: `the translated pattern does not compile: ${(e as Error).message}` };
  }
}

class Translator {
  private i = 0;
  private readonly notes = new Set<string>();
  /** Numbered back-references forbid the extra groups of the atomic emulation. */
  private readonly backrefs: boolean;
  private atomic = 0;

  constructor(private readonly p: string) {
    this.backrefs = /\\[1-9]/.test(p);
  }

  /** `body` matched atomically (no backtracking into it once it matched). */
  private atomicGroup(body: string): string {
    if (this.backrefs) {
      this.notes.add('possessive quantifiers and atomic groups are matched as ordinary ones (the pattern has back-references)');
      return `(?:${body})`;
    }
    const name = `__a${++this.atomic}`;
    return `(?=(?<${name}>${body}))\\k<${name}>`;
  }

  run(): PcreResult {
    const source = this.sequence({ i: false, s: true, m: false }, 0);
    if (this.i < this.p.length) throw new Fail(`unmatched ) at offset ${this.i}`);
    return { ok: true, source, flags: '', notes: [...this.notes] };
  }

  private setFlags(scope: Scope, on: string, off: string): void {
    for (const f of on) {
      if (f === 'i' || f === 's' || f === 'm') scope[f] = true;
      else if (f === 'x') throw new Fail('the (?x) extended syntax is not supported');
      else throw new Fail(`unsupported option (?${f})`);
    }
    for (const f of off) {
      if (f === 'i' || f === 's' || f === 'm') scope[f] = false;
      else throw new Fail(`unsupported option (?-${f})`);
    }
  }

  /** Alternatives up to an unmatched `)` or the end. */
  private sequence(scope: Scope, depth: number): string {
    let out = '';
    let atomStart = 0;
    const p = this.p;
    while (this.i < p.length) {
      const c = p[this.i];
      const isQuantifier = c === '*' || c === '+' || c === '?' || (c === '{' && /^\{\d+(,\d*)?\}/.test(p.slice(this.i)));
      if (!isQuantifier) atomStart = out.length;
      if (c === ')') {
        if (depth === 0) throw new Fail(`unmatched ) at offset ${this.i}`);
        return out;
      }
      if (c === '|') {
        out += '|';
        this.i++;
        continue;
      }
      if (c === '(') {
        out += this.group(scope, depth);
      } else if (c === '[') {
        out += this.cls(scope);
      } else if (c === '\\') {
        out += this.escape(scope);
      } else if (c === '.') {
        this.i++;
        out += scope.s ? '[\\s\\S]' : '[^\\n]';
      } else if (c === '^') {
        this.i++;
        out += scope.m ? '(?<=^|\\n)' : '^';
      } else if (c === '$') {
        this.i++;
        out += scope.m ? '(?=\\n|$)' : '$';
      } else if (isQuantifier) {
        const q = this.quantifier();
        if (q.possessive) out = out.slice(0, atomStart) + this.atomicGroup(out.slice(atomStart) + q.text);
        else out += q.text;
        continue;
      } else {
        this.i++;
        out += this.literal(c, scope);
      }
    }
    if (depth > 0) throw new Fail('missing )');
    return out;
  }

  private quantifier(): { text: string; possessive: boolean } {
    const p = this.p;
    let q: string;
    if (p[this.i] === '{') {
      const m = /^\{\d+(,\d*)?\}/.exec(p.slice(this.i))!;
      q = m[0];
    } else q = p[this.i];
    this.i += q.length;
    if (p[this.i] === '+') {
      this.i++;
      return { text: q, possessive: true };
    }
    if (p[this.i] === '?') {
      q += '?';
      this.i++;
    }
    return { text: q, possessive: false };
  }

  private literal(c: string, scope: Scope): string {
    const code = c.charCodeAt(0);
    if (scope.i && ((code >= 65 && code <= 90) || (code >= 97 && code <= 122))) {
      return `[${c.toLowerCase()}${c.toUpperCase()}]`;
    }
    if ('/'.includes(c)) return '\\/';
    if (code > 0x7e || code < 0x20) return hex2(code & 0xff);
    return c;
  }

  private group(scope: Scope, depth: number): string {
    const p = this.p;
    const rest = p.slice(this.i);
    let open: string;
    const inner: Scope = { ...scope };
    let m: RegExpExecArray | null;
    if (rest.startsWith('(?#')) {
      const end = p.indexOf(')', this.i);
      if (end < 0) throw new Fail('unterminated (?# comment');
      this.i = end + 1;
      return '';
    }
    if ((m = /^\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?\)/.exec(rest))) {
      // An option setting changes the rest of the enclosing group (or pattern).
      this.i += m[0].length;
      this.setFlags(scope, m[1], m[2] ?? '');
      return '';
    }
    if ((m = /^\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?:/.exec(rest))) {
      this.setFlags(inner, m[1], m[2] ?? '');
      open = '(?:';
      this.i += m[0].length;
    } else if (rest.startsWith('(?>')) {
      this.i += 3;
      const body = this.sequence(inner, depth + 1);
      if (p[this.i] !== ')') throw new Fail('missing )');
      this.i++;
      return this.atomicGroup(body);
    } else if ((m = /^\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest))) {
      open = `(?<${m[1]}>`;
      this.i += m[0].length;
    } else if ((m = /^\(\?(?::|=|!|<=|<!)/.exec(rest))) {
      open = m[0];
      this.i += m[0].length;
    } else if (rest.startsWith('(?') || rest.startsWith('(*')) {
      throw new Fail(`unsupported group syntax ${JSON.stringify(rest.slice(0, 6))}`);
    } else {
      open = '(';
      this.i++;
    }
    const body = this.sequence(inner, depth + 1);
    if (p[this.i] !== ')') throw new Fail('missing )');
    this.i++;
    return open + body + ')';
  }

  /** An escape outside a class. */
  private escape(scope: Scope): string {
    const p = this.p;
    const e = p[this.i + 1];
    if (e === undefined) throw new Fail('pattern ends with a backslash');
    const byte = this.byteEscape();
    if (byte !== undefined) return this.literalByte(byte, scope);
    this.i += 2;
    switch (e) {
      case 'A':
        return '^';
      case 'z':
        return '$';
      case 'Z':
        return '(?=\\n?$)';
      case 'h':
        return '[\\t \\xa0]';
      case 'H':
        return '[^\\t \\xa0]';
      case 'v':
        return '[\\n-\\r\\x85]';
      case 'V':
        return '[^\\n-\\r\\x85]';
      case 'R':
        return '(?:\\r\\n|[\\n-\\r\\x85])';
      case 's':
        return '[\\t-\\r ]';
      case 'S':
        return '[^\\t-\\r ]';
      case 'd':
      case 'D':
      case 'w':
      case 'W':
      case 'b':
      case 'B':
        return '\\' + e;
      case 'Q': {
        const end = p.indexOf('\\E', this.i);
        const text = p.slice(this.i, end < 0 ? p.length : end);
        this.i = end < 0 ? p.length : end + 2;
        let out = '';
        for (const ch of text) out += this.literalByte(ch.charCodeAt(0), scope);
        return out;
      }
      case 'E':
        return '';
      case 'G':
      case 'K':
      case 'X':
      case 'C':
      case 'p':
      case 'P':
      case 'g':
      case 'k':
        if (e === 'k') {
          const m = /^<([A-Za-z_]\w*)>/.exec(p.slice(this.i));
          if (m) {
            this.i += m[0].length;
            return `\\k<${m[1]}>`;
          }
        }
        throw new Fail(`the escape \\${e} is not supported`);
    }
    if (e >= '1' && e <= '9') {
      let digits = e;
      while (/[0-9]/.test(p[this.i] ?? '')) digits += p[this.i++];
      return `\\${digits}`;
    }
    // Any other escaped character is that character.
    return this.literalByte(e.charCodeAt(0), scope, true);
  }

  private literalByte(code: number, scope: Scope, escaped = false): string {
    const ch = String.fromCharCode(code);
    if (/[A-Za-z]/.test(ch)) return this.literal(ch, scope);
    if (/[0-9]/.test(ch)) return ch;
    if (code >= 0x20 && code < 0x7f) return /[\\^$.*+?()[\]{}|/-]/.test(ch) ? '\\' + ch : escaped ? ch : ch;
    return hex2(code & 0xff);
  }

  /** `\xhh`, `\x{…}`, `\0oo`, `\o{…}`, `\e \a \f \n \r \t`, `\cX`: the byte, advancing; else undefined. */
  private byteEscape(): number | undefined {
    const p = this.p;
    const e = p[this.i + 1];
    const rest = p.slice(this.i + 2);
    let m: RegExpExecArray | null;
    const simple: Record<string, number> = { e: 0x1b, a: 0x07, f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09 };
    if (Object.hasOwn(simple, e)) {
      this.i += 2;
      return simple[e];
    }
    if (e === 'x') {
      if ((m = /^\{([0-9A-Fa-f]+)\}/.exec(rest))) {
        const v = parseInt(m[1], 16);
        if (v > 0xff) throw new Fail(`\\x{${m[1]}} is not a byte (patterns match bytes)`);
        this.i += 2 + m[0].length;
        return v;
      }
      m = /^[0-9A-Fa-f]{0,2}/.exec(rest)!;
      this.i += 2 + m[0].length;
      return m[0] === '' ? 0 : parseInt(m[0], 16);
    }
    if (e === 'o' && (m = /^\{([0-7]+)\}/.exec(rest))) {
      const v = parseInt(m[1], 8);
      if (v > 0xff) throw new Fail(`\\o{${m[1]}} is not a byte`);
      this.i += 2 + m[0].length;
      return v;
    }
    if (e === '0') {
      m = /^[0-7]{0,2}/.exec(rest)!;
      this.i += 2 + m[0].length;
      return parseInt('0' + m[0], 8);
    }
    if (e === 'c' && rest.length > 0) {
      this.i += 3;
      return rest.toUpperCase().charCodeAt(0) ^ 0x40;
    }
    return undefined;
  }

  /** A character class `[…]`. */
  private cls(scope: Scope): string {
    const p = this.p;
    this.i++;
    let out = '[';
    if (p[this.i] === '^') {
      out += '^';
      this.i++;
    }
    const ci = scope.i;
    let first = true;
    // Items as [lo, hi] byte ranges when known, so the other case can be added.
    const extra: string[] = [];
    let prevByte: number | undefined;
    let extraBefore = 0;
    while (this.i < p.length) {
      const c = p[this.i];
      if (c === ']' && !first) {
        this.i++;
        return out + extra.join('') + ']';
      }
      first = false;
      let m: RegExpExecArray | null;
      if (c === '[' && (m = /^\[:(\^?)([a-z]+):\]/.exec(p.slice(this.i)))) {
        const body = POSIX[m[2]];
        if (body === undefined) throw new Fail(`unknown POSIX class [:${m[2]}:]`);
        if (m[1]) throw new Fail('negated POSIX classes are not supported');
        out += body;
        this.i += m[0].length;
        prevByte = undefined;
        continue;
      }
      // A range `a-z` whose ends are plain bytes.
      if (c === '-' && prevByte !== undefined && p[this.i + 1] !== ']' && this.i + 1 < p.length) {
        this.i++;
        const hi = this.classByte();
        if (hi === undefined) throw new Fail('a class range must end with a character');
        out += '-' + hex2(hi);
        extra.length = extraBefore; // the range's start was added on its own: replace it
        if (ci) extra.push(...otherCaseRanges(prevByte, hi));
        prevByte = undefined;
        continue;
      }
      if (c === '\\') {
        const e = p[this.i + 1];
        const shorthand: Record<string, string> = { s: '\\t-\\r ', h: '\\t \\xa0', v: '\\n-\\r\\x85', d: '\\d', w: '\\w', D: '\\D', W: '\\W', S: '\\S\\xa0' };
        if (Object.hasOwn(shorthand, e)) {
          out += shorthand[e];
          this.i += 2;
          prevByte = undefined;
          continue;
        }
        if (e === 'H' || e === 'V') throw new Fail(`\\${e} inside a class is not supported`);
      }
      const b = this.classByte();
      if (b === undefined) throw new Fail('bad character class');
      extraBefore = extra.length;
      out += hex2(b);
      if (ci) extra.push(...otherCaseRanges(b, b));
      prevByte = b;
    }
    throw new Fail('missing ] of a character class');
  }

  /** One byte inside a class (a character or an escape), advancing. */
  private classByte(): number | undefined {
    const p = this.p;
    if (p[this.i] !== '\\') return p.charCodeAt(this.i++) & 0xff;
    const b = this.byteEscape();
    if (b !== undefined) return b;
    const e = p[this.i + 1];
    if (e === 'b') {
      this.i += 2;
      return 0x08;
    }
    if (/[A-Za-z0-9]/.test(e)) throw new Fail(`the escape \\${e} inside a class is not supported`);
    this.i += 2;
    return e.charCodeAt(0);
  }
}

/** The other-case counterparts of the ASCII letters in [lo, hi], as class items. */
function otherCaseRanges(lo: number, hi: number): string[] {
  const out: string[] = [];
  const add = (a: number, b: number, shift: number): void => {
    const x = Math.max(lo, a);
    const y = Math.min(hi, b);
    if (x <= y) out.push(hex2(x + shift) + (y > x ? '-' + hex2(y + shift) : ''));
  };
  add(0x41, 0x5a, 32);
  add(0x61, 0x7a, -32);
  return out;
}
