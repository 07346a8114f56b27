/**
 * Hover: what a field, function, operator, keyword or list under the cursor means.
 *
 * When the text parses, the syntax tree says exactly what is under the cursor; while
 * the user is typing (the text does not parse) the token under the cursor is
 * classified on its own. The markdown builders here are also used for completion
 * documentation, so both say the same thing.
 */
import { fieldDocUrl, functionDocUrl } from './docLinks';
import type { MarkupContent } from 'vscode-languageserver';
import type * as A from '../language/ast';
import { nameType } from '../language/index';
import { parseExpression } from '../language/parse';
import { phaseAllows, planAllows } from '../language/scheme/index';
import type { FieldDef, FunctionDef, Plan } from '../language/scheme/types';
import { typeToString } from '../language/types';
import { LOGICAL_OPERATORS, LOGICAL_SPELLINGS, OPERATOR_BY_OP, operatorOf, type LogicalWord, type OperatorDoc } from '../language/scheme/operators';
import {
  stringContent,
  tokenize,
  type ExpressionContext,
  type OffsetRange,
  type Tok,
} from './context';

export interface OffsetHover {
  contents: MarkupContent;
  range: OffsetRange;
}

// ---------------------------------------------------------------------------------------
// Reference texts

// Operator texts live in the scheme's operator table (language/scheme/operators.ts).

export const QUANTIFIER_DOCS: Readonly<Record<'any' | 'all', { signature: string; lines: readonly string[] }>> = {
  any: {
    signature: 'any(condition: Array<Bool>) -> Bool',
    lines: [
      'True when the condition holds for at least one element; false when there are none.',
      'Write the condition over `[*]`: `any(http.request.headers["accept"][*] contains "json")`.',
    ],
  },
  all: {
    signature: 'all(condition: Array<Bool>) -> Bool',
    lines: [
      'True when the condition holds for every element; true when there are none.',
      'Write the condition over `[*]`: `all(http.request.headers.values[*] ne "")`.',
    ],
  },
};

/** The IP lists Cloudflare manages for every account. */
export const MANAGED_LIST_DOCS: Readonly<Record<string, string>> = {
  'cf.open_proxies': 'IP addresses of known open proxy servers.',
  'cf.anonymizer': 'IP addresses of known anonymizers (open SOCKS proxies, VPNs and Tor nodes).',
  'cf.vpn': 'IP addresses of known VPN servers.',
  'cf.malware': 'IP addresses of known sources of malware.',
  'cf.botnetcc': 'IP addresses of known botnet command-and-control servers.',
};

const PLAN_LABELS: Readonly<Record<Plan, string>> = { free: 'Free', pro: 'Pro', business: 'Business', enterprise: 'Enterprise' };

export function planLabel(plan: Plan): string {
  return PLAN_LABELS[plan];
}

/** `Pro and above`, `Enterprise`. */
export function planRequirement(plan: Plan): string {
  return plan === 'enterprise' ? 'Enterprise' : `${PLAN_LABELS[plan]} and above`;
}

// ---------------------------------------------------------------------------------------
// Value names

const CONTINENT_NAMES: Readonly<Record<string, string>> = {
  AF: 'Africa',
  AN: 'Antarctica',
  AS: 'Asia',
  EU: 'Europe',
  NA: 'North America',
  OC: 'Oceania',
  SA: 'South America',
  T1: 'Tor network',
};

const COUNTRY_EXTRAS: Readonly<Record<string, string>> = { T1: 'Tor network', XX: 'unknown country', XK: 'Kosovo' };

let regionNames: Intl.DisplayNames | null | undefined;

function countryName(code: string): string | undefined {
  if (Object.hasOwn(COUNTRY_EXTRAS, code)) return COUNTRY_EXTRAS[code];
  if (regionNames === undefined) {
    try {
      regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
    } catch {
      regionNames = null;
    }
  }
  if (!regionNames) return undefined;
  try {
    return regionNames.of(code) ?? undefined;
  } catch {
    return undefined;
  }
}

/** A human name for a well-known value of a field: `DE` of `ip.src.country` is Germany. */
export function valueName(field: FieldDef, value: string): string | undefined {
  if (/\.country$/.test(field.name)) return countryName(value);
  if (/\.continent$/.test(field.name)) return Object.hasOwn(CONTINENT_NAMES, value) ? CONTINENT_NAMES[value] : undefined;
  return undefined;
}

/** A value as a quoted string literal of the language. */
export function quote(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

// ---------------------------------------------------------------------------------------
// Markdown

function availability(def: FieldDef | FunctionDef, ctx: ExpressionContext): string[] {
  const out: string[] = [];
  if (def.plan || def.planNote) {
    let line = `Plan: ${def.plan ? planRequirement(def.plan) : 'all plans'}`;
    if (def.planNote) line += ` (${def.planNote})`;
    if (ctx.plan && !planAllows(def.plan, ctx.plan)) line += ` — not included in the ${planLabel(ctx.plan)} plan`;
    out.push(line);
  }
  if (def.phases) {
    let line = `Phases: only ${def.phases.map((p) => `\`${p}\``).join(', ')}`;
    if (ctx.phase && !phaseAllows(def, ctx.phase, ctx.countingExpression === true)) line += ` — not available in \`${ctx.phase}\``;
    out.push(line);
  }
  return out;
}

const MAX_HOVER_VALUES = 8;

function valuesLine(def: FieldDef): string | undefined {
  const values = def.values;
  if (!values || values.length === 0) return undefined;
  const shown = values.slice(0, MAX_HOVER_VALUES).map((v) => {
    const name = valueName(def, v);
    return name ? `\`${quote(v)}\` ${name}` : `\`${quote(v)}\``;
  });
  const more = values.length > MAX_HOVER_VALUES ? `, … (${values.length} in all)` : '';
  return `Values: ${shown.join(', ')}${more}`;
}

/**
 * Markdown for a field: header (hover only), doc, plan and phase availability,
 * deprecation, and (hover only) the first well-known values. Sections are separated by
 * blank lines.
 */
export function fieldMarkdown(def: FieldDef, ctx: ExpressionContext, forHover = true): string {
  const sections: string[] = [];
  if (forHover) sections.push(`(field) \`${def.name}\`: \`${typeToString(def.type)}\``);
  sections.push(def.doc);
  sections.push(...availability(def, ctx));
  if (def.deprecated) sections.push(`**Deprecated**: use \`${def.deprecated.replacement}\` instead.`);
  if (forHover) {
    const values = valuesLine(def);
    if (values) sections.push(values);
    const url = fieldDocUrl(def);
    if (url) sections.push(`[Documentation of \`${def.name}\`](${url})`);
  }
  return sections.join('\n\n');
}

/** Markdown for a function: header with the signature (hover only), doc, plan and phases. */
export function functionMarkdown(fn: FunctionDef, ctx: ExpressionContext, forHover = true): string {
  const sections: string[] = [];
  if (forHover) sections.push(`(function) \`${fn.signature}\``);
  sections.push(fn.doc);
  sections.push(...availability(fn, ctx));
  const url = forHover ? functionDocUrl(fn) : undefined;
  if (url) sections.push(`[Documentation of \`${fn.name}\`](${url})`);
  return sections.join('\n\n');
}

/** Markdown for a comparison or logical operator as written (`eq`, `==`, `&&`). */
export function operatorMarkdown(doc: OperatorDoc, written: string, ctx: ExpressionContext, kind = 'operator'): string {
  const sections = [`(${kind}) \`${written}\` — ${doc.title}`];
  if (doc.clike) sections.push(written === doc.clike ? `Same as \`${doc.english}\`.` : `Same as \`${doc.clike}\`.`);
  sections.push(...doc.lines);
  if (doc.plan && ctx.plan && !planAllows(doc.plan, ctx.plan)) {
    sections.push(`Not included in the ${planLabel(ctx.plan)} plan.`);
  }
  return sections.join('\n\n');
}

export function quantifierMarkdown(name: 'any' | 'all'): string {
  const q = QUANTIFIER_DOCS[name];
  return [`(quantifier) \`${q.signature}\``, ...q.lines].join('\n\n');
}

export function listMarkdown(name: string, ctx: ExpressionContext): string {
  if (Object.hasOwn(MANAGED_LIST_DOCS, name)) {
    return [`(list) \`$${name}\` — managed IP list`, MANAGED_LIST_DOCS[name], 'Use it with an IP field: `ip.src in $' + name + '`.'].join('\n\n');
  }
  const sections = [`(list) \`$${name}\` — custom list`, 'True after `in` when the value matches an item of the account\'s list with this name.'];
  if (ctx.listNames && !ctx.listNames.includes(name)) sections.push('No list with this name is known to the workspace.');
  return sections.join('\n\n');
}

function valueMarkdown(field: FieldDef, value: string, name: string): string {
  return `\`${quote(value)}\` — ${name} (a value of \`${field.name}\`)`;
}

// ---------------------------------------------------------------------------------------
// What is under the cursor

type Target =
  | { kind: 'name'; name: string; span: OffsetRange; call: boolean }
  | { kind: 'operator'; op: A.ComparisonOp; text: string; span: OffsetRange }
  | { kind: 'logical'; word: LogicalWord; text: string; span: OffsetRange }
  | { kind: 'quantifier'; name: 'any' | 'all'; span: OffsetRange }
  | { kind: 'list'; name: string; span: OffsetRange }
  | { kind: 'value'; field: string; value: string; span: OffsetRange };

const within = (span: OffsetRange, offset: number): boolean => span.start <= offset && offset < span.end;

function findInExpr(e: A.Expr | A.Argument | A.Rhs, offset: number): Target | undefined {
  if (!within(e.span, offset)) return undefined;
  switch (e.kind) {
    case 'logical':
      for (const t of e.ops) {
        if (within(t.span, offset)) return { kind: 'logical', word: LOGICAL_SPELLINGS.get(t.text) ?? e.op, text: t.text, span: t.span };
      }
      for (const item of e.items) {
        const r = findInExpr(item, offset);
        if (r) return r;
      }
      return undefined;
    case 'not':
      if (within(e.token.span, offset)) return { kind: 'logical', word: 'not', text: e.token.text, span: e.token.span };
      return findInExpr(e.operand, offset);
    case 'group':
      return findInExpr(e.inner, offset);
    case 'quantifier':
      if (within(e.nameSpan, offset)) return { kind: 'quantifier', name: e.name, span: e.nameSpan };
      return findInExpr(e.arg, offset);
    case 'comparison': {
      if (e.op && within(e.op.span, offset)) return { kind: 'operator', op: e.op.op, text: e.op.text, span: e.op.span };
      const l = findInExpr(e.lhs, offset);
      if (l) return l;
      if (!e.rhs) return undefined;
      if (e.lhs.kind === 'field') {
        const literals = e.rhs.kind === 'set' ? e.rhs.items : e.rhs.kind === 'literal' ? [e.rhs] : [];
        for (const lit of literals) {
          if (within(lit.span, offset) && lit.form !== 'bare') {
            return { kind: 'value', field: e.lhs.name, value: literalText(lit), span: lit.span };
          }
        }
      }
      return findInExpr(e.rhs, offset);
    }
    case 'field':
      return { kind: 'name', name: e.name, span: e.span, call: false };
    case 'call':
      if (within(e.nameSpan, offset)) return { kind: 'name', name: e.name, span: e.nameSpan, call: true };
      for (const a of e.args) {
        const r = findInExpr(a, offset);
        if (r) return r;
      }
      return undefined;
    case 'index':
      return findInExpr(e.target, offset);
    case 'list':
      return { kind: 'list', name: e.name, span: e.span };
    case 'literal':
    case 'set':
      return undefined;
  }
}

function literalText(lit: A.Literal): string {
  return stringContent({ kind: lit.form === 'raw' ? 'raw' : 'string', text: lit.text, start: 0, end: lit.text.length, closed: true });
}

/** Classifies the token under the cursor when the text does not parse. */
function findInTokens(tokens: readonly Tok[], offset: number, ctx: ExpressionContext): Target | undefined {
  const at = tokens.findIndex((t) => within(t, offset));
  if (at < 0) return undefined;
  const tok = tokens[at];
  const prev = tokens[at - 1];
  const next = tokens[at + 1];
  const span = { start: tok.start, end: tok.end };
  if (tok.kind === 'list') return { kind: 'list', name: tok.text.slice(1), span };
  if (tok.kind !== 'ident' && tok.kind !== 'op') return undefined;
  const followedByParen = next?.kind === 'punct' && next.text === '(';
  if (tok.kind === 'ident') {
    if ((tok.text === 'any' || tok.text === 'all') && followedByParen) return { kind: 'quantifier', name: tok.text, span };
    if (tok.text === 'strict' && next?.kind === 'ident' && next.text === 'wildcard') {
      return { kind: 'operator', op: 'strict wildcard', text: 'strict wildcard', span: { start: tok.start, end: next.end } };
    }
    if (tok.text === 'wildcard' && prev?.kind === 'ident' && prev.text === 'strict') {
      return { kind: 'operator', op: 'strict wildcard', text: 'strict wildcard', span: { start: prev.start, end: tok.end } };
    }
    if (ctx.scheme.fields.has(tok.text) || ctx.scheme.functions.has(tok.text)) {
      return { kind: 'name', name: tok.text, span, call: followedByParen };
    }
  }
  const op = operatorOf(tok.text);
  if (op) return { kind: 'operator', op, text: tok.text, span };
  const word = LOGICAL_SPELLINGS.get(tok.text);
  if (word) return { kind: 'logical', word, text: tok.text, span };
  return undefined;
}

function render(target: Target, ctx: ExpressionContext): string | undefined {
  switch (target.kind) {
    case 'name': {
      const fn = ctx.scheme.functions.get(target.name);
      const field = ctx.scheme.fields.get(target.name);
      if (fn && (target.call || !field)) return functionMarkdown(fn, ctx);
      if (field) return fieldMarkdown(field, ctx);
      return undefined;
    }
    case 'operator':
      return operatorMarkdown(OPERATOR_BY_OP[target.op], target.text, ctx);
    case 'logical':
      return operatorMarkdown(LOGICAL_OPERATORS[target.word], target.text, ctx, 'logical operator');
    case 'quantifier':
      return quantifierMarkdown(target.name);
    case 'list':
      return listMarkdown(target.name, ctx);
    case 'value': {
      const field = ctx.scheme.fields.get(target.field);
      const name = field && valueName(field, target.value);
      return field && name ? valueMarkdown(field, target.value, name) : undefined;
    }
  }
}

/**
 * Hover for the expression `text` at UTF-16 `offset`. The character at `offset` is the
 * one hovered; when nothing is there, the character before it counts (a cursor just
 * after a word).
 */
export function hover(text: string, offset: number, ctx: ExpressionContext): OffsetHover | undefined {
  const parsed = parseExpression(text, { typeOf: (n) => nameType(ctx.scheme, n) });
  let find: (at: number) => Target | undefined;
  if (parsed.ast) {
    const ast = parsed.ast;
    find = (at) => findInExpr(ast, at);
  } else {
    const tokens = tokenize(text);
    find = (at) => findInTokens(tokens, at, ctx);
  }
  const target = find(offset) ?? (offset > 0 ? find(offset - 1) : undefined);
  if (!target) return undefined;
  const value = render(target, ctx);
  if (value === undefined) return undefined;
  return { contents: { kind: 'markdown', value }, range: { start: target.span.start, end: target.span.end } };
}
