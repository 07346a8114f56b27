/**
 * Where things are in an HCL file. HashiCorp's parser (`@cdktf/hcl2json`, hcl.ts) says what a
 * file means but not where: it returns values without positions. This scanner finds the
 * blocks, attributes, lists, objects and string literals (quoted templates and heredocs) of
 * the source, and decodes each string literal keeping, for every decoded UTF-16 unit, the
 * source offset it came from — so a problem found in an expression lands on the right
 * character of the `.tf` file, through `\"`, `\u00e9`, `$${` and heredoc indentation.
 *
 * It is a locator, not a validator: it never throws, and on text it does not understand it
 * records an opaque value and moves on (hcl2json reports the syntax errors). Anything but a
 * literal, a list or an object (`var.x`, `concat(…)`, `a ? b : c`) is an opaque `other`.
 *
 * String templates: `${…}` and `%{…}` sequences are kept verbatim in `text` (each character
 * mapping to itself) and listed in `interpolations`; `$${` and `%%{` decode to `${` and `%{`.
 */

export interface Span {
  /** Source offsets: the first character, and just past the last. */
  readonly start: number;
  readonly end: number;
}

export interface Interpolation extends Span {
  /** The `${…}` or `%{…}` sequence as written (start/end are offsets in the decoded text). */
  readonly source: string;
}

export interface HclString extends Span {
  readonly kind: 'string';
  readonly heredoc: boolean;
  /** The decoded value, interpolations kept as written. */
  readonly text: string;
  /** Source offset of each decoded unit, then of the end of the content (`text.length + 1` entries). */
  readonly offsets: readonly number[];
  readonly interpolations: readonly Interpolation[];
}

export interface HclAttribute {
  readonly name: string;
  readonly nameSpan: Span;
  readonly value: HclValue;
}

export interface HclObject extends Span {
  readonly kind: 'object';
  /** Attributes (`k = v`, `k: v`); nested blocks too for a block body. */
  readonly attributes: readonly HclAttribute[];
  readonly blocks: readonly HclBlock[];
}

export interface HclList extends Span {
  readonly kind: 'list';
  readonly items: readonly HclValue[];
}

export interface HclOther extends Span {
  readonly kind: 'other';
}

export type HclValue = HclString | HclObject | HclList | HclOther;

export interface HclBlock extends Span {
  readonly type: string;
  readonly labels: readonly string[];
  /** The body, from `{` to `}`. */
  readonly body: HclObject;
}

const isIdStart = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
const isIdChar = (c: string) => isIdStart(c) || (c >= '0' && c <= '9') || c === '-';

/** Scans a whole file: its top-level body. */
export function scanHcl(text: string): HclObject {
  return new Scanner(text).body(0, false);
}

class Scanner {
  private i = 0;
  constructor(private readonly s: string) {}

  /** Skips spaces, comments and (when `newlines`) line ends. */
  private skip(newlines: boolean): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i];
      if (c === ' ' || c === '\t' || c === '\r' || (newlines && c === '\n')) this.i++;
      else if (c === '#' || (c === '/' && s[this.i + 1] === '/')) {
        while (this.i < s.length && s[this.i] !== '\n') this.i++;
      } else if (c === '/' && s[this.i + 1] === '*') {
        const end = s.indexOf('*/', this.i + 2);
        this.i = end < 0 ? s.length : end + 2;
      } else break;
    }
  }

  private ident(): string | undefined {
    if (!isIdStart(this.s[this.i] ?? '')) return undefined;
    const start = this.i;
    while (this.i < this.s.length && isIdChar(this.s[this.i])) this.i++;
    return this.s.slice(start, this.i);
  }

  /** A body (a file, or a block's from just after `{`): attributes and blocks up to `}`. */
  body(start: number, braced: boolean): HclObject {
    const attributes: HclAttribute[] = [];
    const blocks: HclBlock[] = [];
    const s = this.s;
    for (;;) {
      this.skip(true);
      if (this.i >= s.length) break;
      if (s[this.i] === '}') {
        if (braced) {
          this.i++;
          break;
        }
        this.i++;
        continue;
      }
      const itemStart = this.i;
      const name = this.ident();
      if (name === undefined) {
        // Not an item we understand: skip to the end of the line.
        this.other('\n}');
        continue;
      }
      const nameSpan = { start: itemStart, end: this.i };
      this.skip(false);
      if ((s[this.i] === '=' && s[this.i + 1] !== '=') || s[this.i] === ':') {
        this.i++;
        attributes.push({ name, nameSpan, value: this.value('\n}') });
        continue;
      }
      const labels: string[] = [];
      while (this.i < s.length && s[this.i] !== '{' && s[this.i] !== '\n') {
        if (s[this.i] === '"') {
          const l = this.quoted();
          labels.push(l.text);
        } else {
          const label = this.ident();
          if (label === undefined) break;
          labels.push(label);
        }
        this.skip(false);
      }
      if (s[this.i] !== '{') {
        this.other('\n}');
        continue;
      }
      this.i++;
      const body = this.body(this.i - 1, true);
      blocks.push({ type: name, labels, start: itemStart, end: this.i, body });
    }
    return { kind: 'object', start, end: this.i, attributes, blocks };
  }

  /** One expression, up to (not including) a character of `stops` at depth 0. */
  private value(stops: string): HclValue {
    this.skip(stops.includes('\n') ? false : true);
    const s = this.s;
    const start = this.i;
    let v: HclValue | undefined;
    if (s[this.i] === '"') v = this.quoted();
    else if (s.startsWith('<<', this.i) && /^<<-?[A-Za-z_]/.test(s.slice(this.i, this.i + 4))) v = this.heredoc();
    else if (s[this.i] === '[') v = this.list();
    else if (s[this.i] === '{') v = this.object();
    if (v) {
      const after = this.i;
      this.skip(!stops.includes('\n'));
      // A literal followed by more (`"a" == var.b ? …`) is an expression we do not look into.
      if (this.i >= s.length || stops.includes(s[this.i]) || (s[this.i] === '\n' && stops.includes('\n'))) {
        this.i = after;
        return v;
      }
    }
    this.i = start;
    return this.other(stops);
  }

  /** Skips an opaque expression: balanced brackets, strings and heredocs, to a stop at depth 0. */
  private other(stops: string): HclOther {
    const s = this.s;
    const start = this.i;
    let depth = 0;
    while (this.i < s.length) {
      const c = s[this.i];
      if (depth === 0 && stops.includes(c)) break;
      if (c === '"') this.quoted();
      else if (c === '<' && /^<<-?[A-Za-z_]/.test(s.slice(this.i, this.i + 4))) this.heredoc();
      else if (c === '#' || (c === '/' && (s[this.i + 1] === '/' || s[this.i + 1] === '*'))) this.skip(false);
      else {
        if (c === '(' || c === '[' || c === '{') depth++;
        else if (c === ')' || c === ']' || c === '}') depth--;
        if (depth < 0) break;
        this.i++;
      }
    }
    let end = this.i;
    while (end > start && /\s/.test(s[end - 1])) end--;
    return { kind: 'other', start, end };
  }

  private list(): HclList {
    const start = this.i++;
    const items: HclValue[] = [];
    for (;;) {
      this.skip(true);
      if (this.i >= this.s.length) break;
      if (this.s[this.i] === ']') {
        this.i++;
        break;
      }
      if (this.s[this.i] === ',') {
        this.i++;
        continue;
      }
      const before = this.i;
      items.push(this.value(',]'));
      if (this.i === before) this.i++;
    }
    return { kind: 'list', start, end: this.i, items };
  }

  private object(): HclObject {
    const start = this.i++;
    const attributes: HclAttribute[] = [];
    const s = this.s;
    for (;;) {
      this.skip(true);
      if (this.i >= s.length) break;
      if (s[this.i] === '}') {
        this.i++;
        break;
      }
      if (s[this.i] === ',') {
        this.i++;
        continue;
      }
      const keyStart = this.i;
      let name: string | undefined;
      if (s[this.i] === '"') name = this.quoted().text;
      else name = this.ident();
      const nameSpan = { start: keyStart, end: this.i };
      this.skip(false);
      if (name === undefined || (s[this.i] !== '=' && s[this.i] !== ':')) {
        this.i = keyStart;
        const before = this.i;
        this.other(',\n}');
        if (this.i === before) this.i++;
        continue;
      }
      this.i++;
      attributes.push({ name, nameSpan, value: this.value(',\n}') });
    }
    return { kind: 'object', start, end: this.i, attributes, blocks: [] };
  }

  /** The end of a `${…}` / `%{…}` sequence starting at `this.i` (just past its `}`). */
  private templateSequence(): void {
    const s = this.s;
    this.i += 2;
    let depth = 1;
    while (this.i < s.length && depth > 0) {
      const c = s[this.i];
      if (c === '"') this.quoted();
      else if (c === '<' && /^<<-?[A-Za-z_]/.test(s.slice(this.i, this.i + 4))) this.heredoc();
      else {
        if (c === '{') depth++;
        else if (c === '}') depth--;
        this.i++;
      }
    }
  }

  /** A quoted template: `"…"` with HCL escapes. */
  private quoted(): HclString {
    const s = this.s;
    const start = this.i++;
    const offsets: number[] = [];
    const interpolations: Interpolation[] = [];
    let text = '';
    while (this.i < s.length && s[this.i] !== '"' && s[this.i] !== '\n') {
      const c = s[this.i];
      if (c === '\\') {
        const e = s[this.i + 1];
        const hex = e === 'u' ? 4 : e === 'U' ? 8 : 0;
        if (hex) {
          const cp = parseInt(s.slice(this.i + 2, this.i + 2 + hex), 16);
          const ch = Number.isNaN(cp) ? '' : String.fromCodePoint(cp);
          for (let k = 0; k < ch.length; k++) offsets.push(this.i);
          text += ch;
          this.i += 2 + hex;
        } else {
          offsets.push(this.i);
          text += ({ n: '\n', r: '\r', t: '\t' } as Record<string, string>)[e] ?? e;
          this.i += 2;
        }
      } else this.templateChar(offsets, interpolations, (t) => (text += t), () => text.length);
    }
    offsets.push(this.i);
    if (s[this.i] === '"') this.i++;
    return { kind: 'string', heredoc: false, start, end: this.i, text, offsets, interpolations };
  }

  /** One character of template text: `$${`/`%%{` escapes, `${…}`/`%{…}` sequences, or itself. */
  private templateChar(offsets: number[], interpolations: Interpolation[], add: (t: string) => void, length: () => number): void {
    const s = this.s;
    const c = s[this.i];
    if ((c === '$' || c === '%') && s[this.i + 1] === c && s[this.i + 2] === '{') {
      offsets.push(this.i, this.i + 2);
      add(`${c}{`);
      this.i += 3;
    } else if ((c === '$' || c === '%') && s[this.i + 1] === '{') {
      const from = this.i;
      this.templateSequence();
      const source = s.slice(from, this.i);
      const at = length();
      for (let k = from; k < this.i; k++) offsets.push(k);
      add(source);
      interpolations.push({ start: at, end: at + source.length, source });
    } else {
      offsets.push(this.i);
      add(c);
      this.i++;
    }
  }

  /** A heredoc: `<<EOT` or `<<-EOT` (indentation stripped), up to the line holding only the marker. */
  private heredoc(): HclString {
    const s = this.s;
    const start = this.i;
    this.i += 2;
    const flush = s[this.i] === '-';
    if (flush) this.i++;
    const marker = this.ident() ?? '';
    while (this.i < s.length && s[this.i] !== '\n') this.i++;
    this.i++;
    // The content lines, up to the closing marker.
    const lines: { start: number; end: number }[] = [];
    let closeEnd = s.length;
    while (this.i < s.length) {
      let eol = s.indexOf('\n', this.i);
      if (eol < 0) eol = s.length;
      if (s.slice(this.i, eol).trim() === marker) {
        closeEnd = this.i + s.slice(this.i, eol).indexOf(marker) + marker.length;
        break;
      }
      lines.push({ start: this.i, end: eol });
      this.i = eol + 1;
    }
    const contentEnd = Math.min(this.i, s.length);
    // `<<-`: the fewest leading spaces or tabs of the lines with text come off every such line.
    let indent = 0;
    if (flush) {
      indent = Infinity;
      for (const l of lines) {
        const line = s.slice(l.start, l.end);
        if (line.trim() === '') continue;
        indent = Math.min(indent, /^[ \t]*/.exec(line)![0].length);
      }
      if (indent === Infinity) indent = 0;
    }
    const offsets: number[] = [];
    const interpolations: Interpolation[] = [];
    let text = '';
    let resume = 0;
    for (const l of lines) {
      if (resume >= l.end) continue;
      const blank = s.slice(l.start, l.end).trim() === '';
      this.i = resume > l.start ? resume : l.start + (blank ? 0 : indent);
      while (this.i < l.end) this.templateChar(offsets, interpolations, (t) => (text += t), () => text.length);
      // A `${…}` may span lines: the next line goes on after it.
      resume = this.i;
      if (this.i > l.end) continue;
      offsets.push(l.end);
      text += '\n';
    }
    offsets.push(contentEnd);
    this.i = closeEnd;
    return { kind: 'string', heredoc: true, start, end: closeEnd, text, offsets, interpolations };
  }
}

/** The attribute `name` of an object, if any. */
export function attribute(o: HclObject, name: string): HclAttribute | undefined {
  return o.attributes.find((a) => a.name === name);
}

/**
 * A string as hcl2json renders it: the template with `${`/`%{` written `$${`/`%%{`, and
 * interpolations as written. Equal to hcl2json's value when no interpolation was folded.
 */
export function asTemplate(str: HclString): string {
  let out = '';
  let k = 0;
  for (const it of str.interpolations) {
    out += escapeTemplate(str.text.slice(k, it.start)) + it.source;
    k = it.end;
  }
  return out + escapeTemplate(str.text.slice(k));
}

/** Literal text in a template: `${` and `%{` doubled so they stay literal. */
export function escapeTemplate(t: string): string {
  return t.replace(/([$%])\{/g, '$1$1{');
}
