/**
 * The formatter: expression text -> canonical text. Pure (no I/O), never throws.
 *
 * It prints from the syntax tree, so the layout depends only on the tree (the result is
 * idempotent), and it never changes meaning:
 *   - every literal (strings, raw strings, numbers, IPs, CIDRs, ranges, hex bytes, map
 *     keys) is printed exactly as written, never re-encoded;
 *   - the user's parentheses are kept, none are added or dropped;
 *   - only spaces and line feeds are emitted between tokens (a tab is not white space in
 *     the Rules language), and never inside a token or between a value and its `[`.
 *
 * Layout: one line with single spaces around binary operators, `not x` / `!x`,
 * `f(a, b)`, `x["k"][*]`, `{a b c}`. When a line would be wider than `width`, the
 * outermost construct that does not fit is broken, Wadler/Prettier style:
 *   - a logical expression puts one operand per line, the operator leading the line
 *     (an operand that is itself an unparenthesised logical of higher precedence indents
 *     its continuation lines, so `a or b and c` never reads as one flat list);
 *   - a group `( … )` ends its line with `(`, indents its content, and puts `)` on a line
 *     of its own;
 *   - a function call or `any(…)`/`all(…)` puts one argument per line the same way (a
 *     single parenthesised argument is hugged: `any((` … `))`);
 *   - a set ends its line with `{`, fills the lines below with as many elements as fit,
 *     and puts `}` on a line of its own.
 * A literal longer than the width stays on one line (it cannot be split). A quoted string
 * containing a line break is printed as is, including any spaces before that break.
 */
import type * as A from './ast';
import { PARSE_LIMIT, tooLong } from './check';
import { error, type Diagnostic } from './diagnostics';
import { NESTING_HINT, parseExpression } from './parse';
import { LOGICAL_OPERATORS, OPERATOR_BY_OP } from './scheme/operators';

export interface FormatOptions {
  /** Maximum line width before a construct is broken over several lines. Default 100. */
  readonly width?: number;
  /**
   * One level of indentation. Default two spaces. Only spaces are white space between
   * tokens in the Rules language, so a tab is replaced by two spaces and any other
   * character is dropped.
   */
  readonly indent?: string;
  /**
   * Operator spelling: as written (default), English words (`and`, `eq`, `not`, …) or
   * C-like symbols (`&&`, `==`, `!`, …). `contains`, `wildcard`, `strict wildcard` and
   * `in` have no C-like form and are printed as words in every notation.
   */
  readonly notation?: 'preserve' | 'english' | 'c-like';
}

export interface FormatResult {
  /** The formatted expression; absent when the input does not parse. */
  readonly text?: string;
  /** The parse diagnostics when the input does not parse; empty otherwise. */
  readonly diagnostics: readonly Diagnostic[];
}

export const DEFAULT_FORMAT_WIDTH = 100;
export const DEFAULT_FORMAT_INDENT = '  ';

/** Formats one filter expression. Returns no text (and the parse diagnostics) when it does not parse. */
export function formatExpression(text: string, options: FormatOptions = {}): FormatResult {
  if (text.length > PARSE_LIMIT) return { diagnostics: [tooLong(text)] };
  const parsed = parseExpression(text);
  if (!parsed.ast) return { diagnostics: parsed.diagnostics };
  try {
    return { text: formatAst(parsed.ast, text, options), diagnostics: [] };
  } catch (e) {
    // Only a pathologically deep tree can exhaust the stack (the parser would usually fail first).
    if (e instanceof RangeError) {
      return {
        diagnostics: [error('nesting-too-deep', 0, text.length, 'maximum nesting depth exceeded (limit: 128)', NESTING_HINT)],
      };
    }
    throw e;
  }
}

/**
 * Formats an already parsed expression. `source` is the text it was parsed from; literals
 * are printed from the tree, whose literal texts are exact slices of that source.
 */
export function formatAst(ast: A.Expr, source: string, options: FormatOptions = {}): string {
  void source;
  const width = Number.isFinite(options.width) ? Math.max(0, Math.floor(options.width as number)) : DEFAULT_FORMAT_WIDTH;
  const indent = sanitizeIndent(options.indent ?? DEFAULT_FORMAT_INDENT);
  const printer = new AstPrinter(options.notation ?? 'preserve');
  return render(printer.expr(ast, false), width, indent);
}

function sanitizeIndent(indent: string): string {
  return indent.replace(/\t/g, '  ').replace(/[^ ]/g, '');
}

// ---------------------------------------------------------------------------------------
// Documents (a small Wadler/Prettier-style pretty printer)

type Doc = string | Concat | Line | Indent | Group | Fill;
interface Concat { readonly t: 'concat'; readonly parts: readonly Doc[] }
/** A space (or nothing, when `soft`) on one line; a line break plus indentation when broken. */
interface Line { readonly t: 'line'; readonly soft: boolean }
interface Indent { readonly t: 'indent'; readonly contents: Doc }
/** Printed on one line when it fits, otherwise with all its own lines broken. */
interface Group { readonly t: 'group'; readonly contents: Doc }
/** Words separated by spaces, wrapped onto new lines only where the next word does not fit. */
interface Fill { readonly t: 'fill'; readonly words: readonly string[] }

const LINE: Line = { t: 'line', soft: false };
const SOFTLINE: Line = { t: 'line', soft: true };
const concat = (...parts: Doc[]): Doc => ({ t: 'concat', parts });
const indent = (contents: Doc): Doc => ({ t: 'indent', contents });
const group = (contents: Doc): Doc => ({ t: 'group', contents });

/** `open` content `close`, broken as `open` / indented content / `close`. */
function bracketed(open: string, contents: Doc, close: string): Doc {
  return group(concat(open, indent(concat(SOFTLINE, contents)), SOFTLINE, close));
}

// ---------------------------------------------------------------------------------------
// Syntax tree -> document

class AstPrinter {
  constructor(private readonly notation: 'preserve' | 'english' | 'c-like') {}

  /** `nested`: an operand of a logical expression (an unparenthesised logical indents its continuation). */
  expr(e: A.Expr, nested: boolean): Doc {
    switch (e.kind) {
      case 'logical':
        return this.logical(e, nested);
      case 'not':
        return this.not(e);
      case 'group':
        return bracketed('(', this.expr(e.inner, false), ')');
      case 'quantifier':
        return this.call(e.name, [e.arg]);
      case 'comparison':
        return this.comparison(e);
    }
  }

  private logical(e: A.LogicalExpr, nested: boolean): Doc {
    const rest: Doc[] = [];
    e.items.forEach((item, i) => {
      if (i === 0) return;
      rest.push(LINE, this.logicalOp(e.op, e.ops[i - 1]), ' ', this.expr(item, true));
    });
    const tail = concat(...rest);
    return group(concat(this.expr(e.items[0], true), nested ? indent(tail) : tail));
  }

  private logicalOp(op: A.LogicalOp, token: A.Token | undefined): string {
    if (this.notation === 'c-like') return LOGICAL_OPERATORS[op].clike;
    if (this.notation === 'english') return op;
    return token?.text ?? op;
  }

  private not(e: A.NotExpr): Doc {
    const bang = this.notation === 'c-like' || (this.notation === 'preserve' && e.token.text === '!');
    return concat(bang ? '!' : 'not ', this.expr(e.operand, false));
  }

  private comparison(e: A.ComparisonExpr): Doc {
    const lhs = this.value(e.lhs);
    if (!e.op || !e.rhs) return lhs;
    return concat(lhs, ' ', this.comparisonOp(e.op), ' ', this.rhs(e.rhs));
  }

  private comparisonOp(op: A.OperatorToken): string {
    const def = OPERATOR_BY_OP[op.op];
    if (this.notation === 'english') return def.english;
    if (this.notation === 'c-like') return def.clike ?? def.english;
    return op.text;
  }

  private rhs(r: A.Rhs): Doc {
    switch (r.kind) {
      case 'literal':
        return r.text;
      case 'set':
        if (r.items.length === 0) return '{}';
        return bracketed('{', { t: 'fill', words: r.items.map((i) => i.text) }, '}');
      case 'list':
        return '$' + r.name;
      default:
        return this.value(r);
    }
  }

  private value(v: A.ValueExpr): Doc {
    switch (v.kind) {
      case 'field':
        return v.name;
      case 'call':
        return this.call(v.name, v.args);
      case 'index':
        return concat(this.value(v.target), '[', v.key.kind === 'each' ? '*' : v.key.literal.text, ']');
    }
  }

  private call(name: string, args: readonly A.Argument[]): Doc {
    if (args.length === 0) return name + '()';
    // A single parenthesised argument hugs the call's parentheses: `any((` … `))`.
    if (args.length === 1 && args[0].kind === 'group') return concat(name, '(', this.argument(args[0]), ')');
    const parts: Doc[] = [];
    args.forEach((a, i) => {
      if (i > 0) parts.push(',', LINE);
      parts.push(this.argument(a));
    });
    return bracketed(name + '(', concat(...parts), ')');
  }

  private argument(a: A.Argument): Doc {
    switch (a.kind) {
      case 'literal':
        return a.text;
      case 'field':
      case 'call':
      case 'index':
        return this.value(a);
      default:
        return this.expr(a, false);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Document -> text

type Mode = 'flat' | 'break';
interface Cmd { readonly level: number; readonly mode: Mode; readonly doc: Doc }

/** Display width of a single-line piece of text, in code points. */
function textWidth(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function render(doc: Doc, width: number, indentUnit: string): string {
  const out: string[] = [];
  let column = 0;
  const stack: Cmd[] = [{ level: 0, mode: 'break', doc }];

  const write = (s: string): void => {
    out.push(s);
    const nl = s.lastIndexOf('\n');
    column = nl < 0 ? column + textWidth(s) : textWidth(s.slice(nl + 1));
  };
  const newline = (level: number): void => {
    out.push('\n' + indentUnit.repeat(level));
    column = indentUnit.length * level;
  };

  while (stack.length > 0) {
    const { level, mode, doc: d } = stack.pop()!;
    if (typeof d === 'string') {
      write(d);
      continue;
    }
    switch (d.t) {
      case 'concat':
        for (let i = d.parts.length - 1; i >= 0; i--) stack.push({ level, mode, doc: d.parts[i] });
        break;
      case 'indent':
        stack.push({ level: level + 1, mode, doc: d.contents });
        break;
      case 'line':
        if (mode === 'flat') {
          if (!d.soft) write(' ');
        } else newline(level);
        break;
      case 'group': {
        const flat = mode === 'flat' || fits({ level, mode: 'flat', doc: d.contents }, stack, width - column, width);
        stack.push({ level, mode: flat ? 'flat' : 'break', doc: d.contents });
        break;
      }
      case 'fill':
        d.words.forEach((w, i) => {
          if (i > 0) {
            if (mode === 'flat' || column + 1 + textWidth(firstLine(w)) <= width) write(' ');
            else newline(level);
          }
          write(w);
        });
        break;
    }
  }
  return out.join('');
}

function firstLine(s: string): string {
  const nl = s.indexOf('\n');
  return nl < 0 ? s : s.slice(0, nl);
}

/**
 * Whether `next` printed flat, followed by the pending commands up to their first line
 * break, fits in the `remaining` columns of the current line (and, after a line break
 * inside a string literal, in the `width` of the lines that follow).
 */
function fits(next: Cmd, rest: readonly Cmd[], remaining: number, width: number): boolean {
  const cmds: Cmd[] = [next];
  let restIndex = rest.length;
  /** Accounts for a piece of text; false when it overflows. */
  const take = (s: string): boolean => {
    const first = s.indexOf('\n');
    if (first < 0) {
      remaining -= textWidth(s);
      return remaining >= 0;
    }
    if (textWidth(s.slice(0, first)) > remaining) return false;
    remaining = width - textWidth(s.slice(s.lastIndexOf('\n') + 1));
    return remaining >= 0;
  };
  for (;;) {
    if (cmds.length === 0) {
      if (restIndex === 0) return true;
      cmds.push(rest[--restIndex]);
      continue;
    }
    const { level, mode, doc: d } = cmds.pop()!;
    if (typeof d === 'string') {
      if (!take(d)) return false;
      continue;
    }
    switch (d.t) {
      case 'concat':
        for (let i = d.parts.length - 1; i >= 0; i--) cmds.push({ level, mode, doc: d.parts[i] });
        break;
      case 'indent':
        cmds.push({ level: level + 1, mode, doc: d.contents });
        break;
      case 'line':
        if (mode === 'break') return true;
        if (!d.soft && !take(' ')) return false;
        break;
      case 'group':
        cmds.push({ level, mode, doc: d.contents });
        break;
      case 'fill':
        if (mode === 'break') {
          // Broken, only its first word shares the current line.
          return d.words.length === 0 || take(firstLine(d.words[0]));
        }
        if (!take(d.words.join(' '))) return false;
        break;
    }
  }
}
