/**
 * Completion for one expression at a UTF-16 offset.
 *
 * The context comes from the tokens before the cursor (`analyze` in context.ts), so it
 * works on text that does not parse yet. The word being typed (a dotted name, a `$list`,
 * a bare literal) is left out of the analysis and becomes the range every item
 * replaces; inside a string literal the range is the whole string, quotes included.
 *
 * What is offered:
 * - at the start of an operand: fields, functions (snippets), `not`, `any(`, `all(`, `(`;
 * - after a complete operand: the comparison operators valid for its type, the index
 *   forms for a map or an array, the logical operators after a Bool;
 * - after a comparison operator: the field's well-known values, quoted; after `in`, a set
 *   and the lists; inside `{…}` the values not yet in the set;
 * - inside `map["…"]`: the map's keys seen in samples (plus common header names);
 * - after a complete comparison: `and`, `or`, `xor`.
 */
import {
  CompletionItemKind,
  CompletionItemTag,
  InsertTextFormat,
  type Command,
  type CompletionItem,
} from 'vscode-languageserver';
import { phaseAllows, planAllows } from '../language/scheme/index';
import { LOGICAL_OPERATORS, OPERATORS, OPERATOR_BY_OP, isDiscouraged, operatorsFor, type OperatorDef } from '../language/scheme/operators';
import type { FieldDef, FunctionDef, ParamDef, TypePattern } from '../language/scheme/types';
import { typeToString, type Type } from '../language/types';
import {
  analyze,
  tokenize,
  type Analysis,
  type ExpressionContext,
  type Frame,
  type OffsetRange,
  type Tok,
  type ValueInfo,
} from './context';
import {
  MANAGED_LIST_DOCS,
  fieldMarkdown,
  functionMarkdown,
  operatorMarkdown,
  planLabel,
  planRequirement,
  quantifierMarkdown,
  quote,
  valueName,
} from './hover';

/** An LSP completion item whose text edit range is given as offsets into the expression. */
export type OffsetCompletionItem = Omit<CompletionItem, 'textEdit'> & {
  textEdit?: { range: OffsetRange; newText: string };
};

const TRIGGER_SUGGEST: Command = { title: 'Suggest', command: 'editor.action.triggerSuggest' };
const TRIGGER_PARAMETER_HINTS: Command = { title: 'Parameter hints', command: 'editor.action.triggerParameterHints' };

/** Common request header names (lower case, as `http.request.headers` keys are). */
export const COMMON_REQUEST_HEADERS: readonly string[] = [
  'user-agent',
  'referer',
  'content-type',
  'accept',
  'accept-language',
  'accept-encoding',
  'cookie',
  'authorization',
  'x-forwarded-for',
  'host',
  'origin',
  'x-requested-with',
  'cache-control',
  'content-length',
  'x-real-ip',
];

/** Common response header names (lower case). */
export const COMMON_RESPONSE_HEADERS: readonly string[] = [
  'content-type',
  'cache-control',
  'set-cookie',
  'location',
  'server',
  'content-length',
  'content-encoding',
  'etag',
  'last-modified',
  'vary',
  'x-frame-options',
  'strict-transport-security',
  'content-security-policy',
  'access-control-allow-origin',
];

const HEADER_MAPS: Readonly<Record<string, readonly string[]>> = {
  'http.request.headers': COMMON_REQUEST_HEADERS,
  'http.response.headers': COMMON_RESPONSE_HEADERS,
  'raw.http.response.headers': COMMON_RESPONSE_HEADERS,
};

const isWordTok = (t: Tok): boolean => t.kind === 'ident' || t.kind === 'list' || t.kind === 'bare';
const WORD_CHAR = /[A-Za-z0-9_.$:/-]/;

/** Sort key: group, then position within the group. */
function sortKey(group: number, index: number): string {
  return `${String(group).padStart(2, '0')}${String(index).padStart(4, '0')}`;
}

interface Place {
  /** The range items replace. */
  readonly range: OffsetRange;
  /** What is typed of the word before the cursor (empty when none). */
  readonly prefix: string;
  /** Items inserted at an empty range after a non-space character need a leading space. */
  readonly needsSpace: boolean;
  /** The range is a string literal, quotes included. */
  readonly inString: boolean;
  /** The text right after the range. */
  readonly after: string;
}

/**
 * Completion items for the expression `text` at UTF-16 `offset`. Items come sorted
 * (their `sortText` agrees with the array order). Never throws on any text.
 */
export function complete(text: string, offset: number, ctx: ExpressionContext): OffsetCompletionItem[] {
  offset = Math.max(0, Math.min(offset, text.length));
  const before = tokenize(text.slice(0, offset));
  const last = before[before.length - 1];

  // Inside a string (the prefix ends in an unclosed one).
  if (last && (last.kind === 'string' || last.kind === 'raw') && !last.closed) {
    const analysis = analyze(before.slice(0, -1), ctx.scheme);
    const end = closingQuoteEnd(text, last, offset);
    const place: Place = {
      range: { start: last.start, end },
      prefix: text.slice(last.start, offset),
      needsSpace: false,
      inString: true,
      after: text.slice(end),
    };
    if (last.kind === 'raw') return [];
    return finish(stringItems(analysis, place, ctx));
  }

  // A word being typed: it is replaced whole, and left out of the context.
  let wordTok: Tok | undefined;
  if (last && last.end === offset && isWordTok(last)) wordTok = last;
  const tokens = wordTok ? before.slice(0, -1) : before;
  const analysis = analyze(tokens, ctx.scheme);
  let end = offset;
  while (end < text.length && WORD_CHAR.test(text[end])) end++;
  const start = wordTok ? wordTok.start : offset;
  if (!wordTok) end = offset;
  const prevChar = text[start - 1];
  const place: Place = {
    range: { start, end },
    prefix: text.slice(start, offset),
    needsSpace: start > 0 && prevChar !== undefined && !/[\s([{,!]/.test(prevChar),
    inString: false,
    after: text.slice(end),
  };

  if (wordTok?.kind === 'list') return finish(listItems(place, ctx, analysis.state.kind === 'operator' ? analysis.state.lhs.type : undefined));
  const onlyWord = text.slice(0, start).trim() === '' && text.slice(end).trim() === '';
  return finish(itemsFor(analysis, place, ctx, onlyWord));
}

/**
 * Where a string that starts before the cursor ends. When the text after the cursor
 * closes it and the rest then lexes cleanly, the whole string is replaced; otherwise
 * (quotes out of step because the user is typing) only up to the cursor.
 */
function closingQuoteEnd(text: string, str: Tok, offset: number): number {
  const full = tokenize(text.slice(str.start));
  const whole = full[0];
  if (!whole || !whole.closed) return offset;
  const rest = full.slice(1);
  if (rest.some((t) => (t.kind === 'string' || t.kind === 'raw') && !t.closed)) return offset;
  const end = str.start + whole.end;
  return text.slice(offset, end).includes('\n') ? offset : end;
}

function finish(items: OffsetCompletionItem[]): OffsetCompletionItem[] {
  return items.sort((a, b) => ((a.sortText ?? '') < (b.sortText ?? '') ? -1 : (a.sortText ?? '') > (b.sortText ?? '') ? 1 : 0));
}

function edit(place: Place, newText: string, space = true): { range: OffsetRange; newText: string } {
  const lead = space && place.needsSpace ? ' ' : '';
  return { range: { start: place.range.start, end: place.range.end }, newText: lead + newText };
}

// ---------------------------------------------------------------------------------------
// Dispatch

function itemsFor(analysis: Analysis, place: Place, ctx: ExpressionContext, onlyWord: boolean): OffsetCompletionItem[] {
  const { state, frames } = analysis;
  const frame = frames[frames.length - 1];
  if (frame?.kind === 'set') return valueItems(frame.lhs, place, new Set(frame.items));
  if (frame?.kind === 'index') return frame.key === undefined ? indexKeyItems(frame.target, place, ctx) : [];
  switch (state.kind) {
    case 'operand':
      return operandItems(frames, place, ctx, onlyWord);
    case 'value':
      if (state.strictPending) {
        const sp = state.strictPending;
        return operatorItems([OPERATOR_BY_OP['strict wildcard']], { ...place, range: { start: sp.start, end: place.range.end }, needsSpace: false }, ctx, state.value);
      }
      return afterValueItems(state.value, place, ctx);
    case 'operator':
      if (state.op === 'in') return [setItem(place, state.lhs), ...listItems(place, ctx, state.lhs.type)];
      if (state.op === 'matches') return [];
      if (state.op === 'wildcard' || state.op === 'strict wildcard' || state.op === 'contains') return valueItems(state.lhs, place, new Set());
      return [...valueItems(state.lhs, place, new Set()), ...sameTypeFieldItems(state.lhs, place, ctx)];
    case 'done':
      return logicalItems(place);
  }
}

function stringItems(analysis: Analysis, place: Place, ctx: ExpressionContext): OffsetCompletionItem[] {
  const { state, frames } = analysis;
  const frame = frames[frames.length - 1];
  if (frame?.kind === 'set') return valueItems(frame.lhs, place, new Set(frame.items));
  if (frame?.kind === 'index') return frame.key === undefined ? mapKeyItems(frame.target, place, ctx, true) : [];
  if (state.kind === 'operator' && state.op !== 'matches' && state.op !== 'in') return valueItems(state.lhs, place, new Set());
  if (state.kind === 'operand' && frame?.kind === 'call') return literalArgumentItems(frame, place, ctx);
  return [];
}

// ---------------------------------------------------------------------------------------
// Operands: fields, functions, keywords

function typeFits(t: Type, patterns: readonly TypePattern[]): boolean {
  return patterns.some((p) => {
    if ('any' in p || 'sameAs' in p || 'elementOf' in p) return true;
    if ('anyArray' in p) return t.kind === 'Array';
    if ('anyMap' in p) return t.kind === 'Map';
    return typeToString(p) === typeToString(t);
  });
}

function paramAt(fn: FunctionDef, index: number): ParamDef | undefined {
  if (index < fn.params.length) return fn.params[index];
  const lastParam = fn.params[fn.params.length - 1];
  return lastParam?.variadic ? lastParam : undefined;
}

function fieldDetail(def: FieldDef): string {
  const type = typeToString(def.type);
  return def.plan ? `${type} · ${planRequirement(def.plan)}` : type;
}

function available(def: FieldDef | FunctionDef, ctx: ExpressionContext): boolean {
  return (ctx.plan === undefined || planAllows(def.plan, ctx.plan)) && phaseAllows(def, ctx.phase, ctx.countingExpression === true);
}

/** Matches a name against what is typed: a prefix, or (3+ characters, no dot) a prefix of a later segment. */
function nameMatches(name: string, prefix: string): 0 | 1 | undefined {
  if (prefix === '' || name.startsWith(prefix)) return 0;
  if (prefix.length >= 3 && !prefix.includes('.') && name.split('.').some((seg, i) => i > 0 && seg.startsWith(prefix))) return 1;
  return undefined;
}

function functionSnippet(fn: FunctionDef): string {
  const parts: string[] = [];
  for (let i = 0; i < fn.minArgs; i++) {
    const p = paramAt(fn, i);
    parts.push(`\${${i + 1}:${p?.name ?? `arg${i}`}}`);
  }
  return `${fn.name}(${parts.join(', ')})`;
}

function fieldItem(def: FieldDef, place: Place, ctx: ExpressionContext, group: number, index: number): OffsetCompletionItem {
  const item: OffsetCompletionItem = {
    label: def.name,
    kind: CompletionItemKind.Field,
    detail: fieldDetail(def),
    documentation: { kind: 'markdown', value: fieldMarkdown(def, ctx, false) },
    sortText: sortKey(group, index),
    filterText: def.name,
    textEdit: edit(place, def.name),
  };
  if (def.deprecated) item.tags = [CompletionItemTag.Deprecated];
  return item;
}

/**
 * Fields of the left-hand type, for a name typed on the right of `eq`, `ne`, `lt`… (a
 * dynamic comparison, `http.request.uri.path ne raw.http.request.uri.path`).
 */
function sameTypeFieldItems(lhs: ValueInfo, place: Place, ctx: ExpressionContext): OffsetCompletionItem[] {
  const t = lhs.type;
  if (!t || !/^[A-Za-z_]/.test(place.prefix)) return [];
  const want = typeToString(t);
  const items: OffsetCompletionItem[] = [];
  let index = 0;
  for (const def of ctx.scheme.fields.values()) {
    index++;
    if (def.managedOnly || typeToString(def.type) !== want) continue;
    const match = nameMatches(def.name, place.prefix);
    if (match === undefined) continue;
    items.push(fieldItem(def, place, ctx, def.deprecated ? 60 : !available(def, ctx) ? 50 : 40 + match, index));
  }
  return items;
}

function operandItems(frames: readonly Frame[], place: Place, ctx: ExpressionContext, onlyWord: boolean): OffsetCompletionItem[] {
  const frame = frames[frames.length - 1];
  // In a function argument: literal-only parameters take no field; the others rank the
  // fields of a fitting type first.
  let param: ParamDef | undefined;
  const items: OffsetCompletionItem[] = [];
  if (frame?.kind === 'call') {
    const literals = literalArgumentItems(frame, place, ctx);
    param = frame.fn && paramAt(frame.fn, frame.argIndex);
    if (param?.kind === 'literal') return literals;
    literals.forEach((item, i) => items.push({ ...item, sortText: sortKey(5, i) }));
  }
  const inCall = frame?.kind === 'call';
  const fits = (t: Type): boolean => {
    if (frame?.kind === 'quantifier') return t.kind === 'Array' || t.kind === 'Map';
    return !param || typeFits(t, param.types) || (t.kind === 'Array' && typeFits(t.of, param.types));
  };

  let index = 0;
  for (const def of ctx.scheme.fields.values()) {
    index++;
    if (def.managedOnly) continue;
    if (def.name === 'true' && !onlyWord) continue;
    const match = nameMatches(def.name, place.prefix);
    if (match === undefined) continue;
    const group = def.deprecated ? 60 : !available(def, ctx) ? 50 : !fits(def.type) ? 40 : 10 + match;
    items.push(fieldItem(def, place, ctx, group, index));
  }

  const functions = [...ctx.scheme.functions.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  functions.forEach((fn, i) => {
    if (fn.managedOnly) return;
    const match = nameMatches(fn.name, place.prefix);
    if (match === undefined) return;
    let ret: Type | undefined;
    try {
      ret = fn.returns([]);
    } catch {
      ret = undefined;
    }
    const group = !available(fn, ctx) ? 55 : ret && !fits(ret) ? 45 : 20 + match;
    const hasParen = /^\s*\(/.test(place.after);
    items.push({
      label: fn.name,
      kind: CompletionItemKind.Function,
      detail: fn.signature,
      documentation: { kind: 'markdown', value: functionMarkdown(fn, ctx, false) },
      sortText: sortKey(group, i),
      filterText: fn.name,
      insertTextFormat: hasParen ? InsertTextFormat.PlainText : InsertTextFormat.Snippet,
      textEdit: edit(place, hasParen ? fn.name : functionSnippet(fn)),
      command: TRIGGER_PARAMETER_HINTS,
    });
  });

  if (!inCall) items.push(...keywordItems(place, ctx));
  return items;
}

function keywordItems(place: Place, ctx: ExpressionContext): OffsetCompletionItem[] {
  const items: OffsetCompletionItem[] = [];
  const add = (label: string, newText: string, doc: string, snippet: boolean, i: number): void => {
    if (place.prefix !== '' && !label.startsWith(place.prefix)) return;
    items.push({
      label,
      kind: CompletionItemKind.Keyword,
      documentation: { kind: 'markdown', value: doc },
      sortText: sortKey(30, i),
      filterText: label,
      insertTextFormat: snippet ? InsertTextFormat.Snippet : InsertTextFormat.PlainText,
      textEdit: edit(place, newText),
    });
  };
  add('not', 'not ', operatorMarkdown(LOGICAL_OPERATORS.not, 'not', ctx, 'logical operator'), false, 1);
  add('any(', 'any(${1})', quantifierMarkdown('any'), true, 2);
  add('all(', 'all(${1})', quantifierMarkdown('all'), true, 3);
  add('(', '(${1})', 'Group conditions: `(a or b) and c`.', true, 4);
  return items;
}

// ---------------------------------------------------------------------------------------
// After a value: operators, index forms, logical operators

function afterValueItems(value: ValueInfo, place: Place, ctx: ExpressionContext): OffsetCompletionItem[] {
  if (value.literal) return [];
  const t = value.type;
  if (!t) return operatorItems(OPERATORS, place, ctx, value);
  if (t.kind === 'Bool') return logicalItems(place);
  if (t.kind === 'Map' || t.kind === 'Array') {
    // `[` must follow the value without space: replace any space typed since.
    const range = { start: value.end, end: place.range.end };
    const indexPlace: Place = { ...place, range, needsSpace: false };
    return indexFormItems(t, indexPlace, value, ctx);
  }
  // The operators that are not recommended for the type come last.
  const ops = operatorsFor(t);
  return operatorItems([...ops.filter((o) => !isDiscouraged(o.op, t)), ...ops.filter((o) => isDiscouraged(o.op, t))], place, ctx, value);
}

/**
 * The operators `ops` for the left-hand value `lhs`, by their English spelling (and the
 * C-like one too where the table asks for it). Each inserts the operator and a space, and
 * asks for completion again when there is something to offer next (a set or list after
 * `in`, the field's values after the others).
 */
function operatorItems(ops: readonly OperatorDef[], place: Place, ctx: ExpressionContext, lhs: ValueInfo): OffsetCompletionItem[] {
  const spaceAfter = /^\s/.test(place.after) ? '' : ' ';
  const hasValues = (lhs.valuesOf?.values?.length ?? 0) > 0;
  const spelled = ops.flatMap((doc) => (doc.completeClike && doc.clike ? [[doc.clike, doc] as const, [doc.english, doc] as const] : [[doc.english, doc] as const]));
  return spelled.map(([label, doc], i) => {
    const op = doc.op;
    let detail = doc.title;
    const other = label === doc.clike ? doc.english : doc.clike;
    if (other) detail += ` (also ${other})`;
    let group = 10;
    if (lhs.type && isDiscouraged(op, lhs.type)) {
      detail += ' — not recommended for IP addresses'; // the only discouraged use in the table
      group = 20;
    }
    if (doc.plan && ctx.plan && !planAllows(doc.plan, ctx.plan)) {
      detail += ` — needs the ${planLabel(doc.plan)} plan`;
      group = 30;
    }
    const item: OffsetCompletionItem = {
      label,
      kind: CompletionItemKind.Operator,
      detail,
      documentation: { kind: 'markdown', value: operatorMarkdown(doc, label, ctx) },
      sortText: sortKey(group, i),
      filterText: label,
      textEdit: edit(place, label + spaceAfter),
    };
    if (op === 'in' || (hasValues && op !== 'matches')) item.command = TRIGGER_SUGGEST;
    return item;
  });
}

function logicalItems(place: Place): OffsetCompletionItem[] {
  const spaceAfter = /^\s/.test(place.after) ? '' : ' ';
  return (['and', 'or', 'xor'] as const).map((w, i) => {
    const doc = LOGICAL_OPERATORS[w];
    return {
      label: w,
      kind: CompletionItemKind.Keyword,
      detail: `${doc.title} (also ${doc.clike})`,
      documentation: { kind: 'markdown', value: doc.lines.join('\n\n') },
      sortText: sortKey(10, i),
      filterText: w,
      textEdit: edit(place, w + spaceAfter),
      command: TRIGGER_SUGGEST,
    };
  });
}

function indexFormItems(t: Type, place: Place, value: ValueInfo, ctx: ExpressionContext): OffsetCompletionItem[] {
  const items: OffsetCompletionItem[] = [];
  const each = {
    label: '[*]',
    kind: CompletionItemKind.Operator,
    detail: 'every element',
    documentation: {
      kind: 'markdown' as const,
      value: 'Applies the comparison to every element (`Array<Bool>`); wrap it in `any(…)` or `all(…)`.',
    },
    filterText: '[*]',
    textEdit: edit(place, '[*]', false),
  };
  if (t.kind === 'Map') {
    const keys = value.field ? keysOf(value.field.name, ctx) : [];
    items.push({
      label: '["…"]',
      kind: CompletionItemKind.Operator,
      detail: 'value for a key',
      documentation: {
        kind: 'markdown',
        value: `The values for one key (an \`${typeToString(t.of)}\`).${keys.length ? ` Keys seen: ${keys.slice(0, 5).map((k) => `\`${quote(k)}\``).join(', ')}.` : ''}`,
      },
      sortText: sortKey(10, 1),
      filterText: '["',
      insertTextFormat: InsertTextFormat.Snippet,
      textEdit: edit(place, '["$1"]', false),
      command: TRIGGER_SUGGEST,
    });
    items.push({ ...each, sortText: sortKey(10, 2) });
  } else if (t.kind === 'Array') {
    items.push({
      label: '[0]',
      kind: CompletionItemKind.Operator,
      detail: 'element at an index',
      documentation: { kind: 'markdown', value: `One element (an \`${typeToString(t.of)}\`), counting from 0.` },
      sortText: sortKey(10, 1),
      filterText: '[0]',
      insertTextFormat: InsertTextFormat.Snippet,
      textEdit: edit(place, '[${1:0}]', false),
    });
    items.push({ ...each, sortText: sortKey(10, 2) });
  }
  return items;
}

// ---------------------------------------------------------------------------------------
// Right-hand sides: values, sets, lists

function valueItems(lhs: ValueInfo, place: Place, exclude: ReadonlySet<string>): OffsetCompletionItem[] {
  const def = lhs.valuesOf;
  const values = def?.values;
  if (!def || !values) return [];
  const items: OffsetCompletionItem[] = [];
  values.forEach((v, i) => {
    if (exclude.has(v)) return;
    const quoted = quote(v);
    const name = valueName(def, v);
    const item: OffsetCompletionItem = {
      label: quoted,
      kind: CompletionItemKind.Value,
      detail: name ?? `value of ${def.name}`,
      sortText: sortKey(10, i),
      filterText: place.inString ? quoted : `${v}${name ? ` ${name}` : ''}`,
      textEdit: edit(place, quoted),
    };
    if (name) item.labelDetails = { description: name };
    items.push(item);
  });
  return items;
}

function setItem(place: Place, lhs: ValueInfo): OffsetCompletionItem {
  const example = lhs.type?.kind === 'Int' ? '${1:80 443}' : lhs.type?.kind === 'Ip' ? '${1:192.0.2.0/24}' : '$1';
  return {
    label: '{…}',
    kind: CompletionItemKind.Snippet,
    detail: 'set of values',
    documentation: {
      kind: 'markdown',
      value: 'Items separated by spaces (no commas): `{"GET" "HEAD"}`, `{80 443 8000..8999}`, `{192.0.2.0/24 2001:db8::/32}`.',
    },
    sortText: sortKey(10, 0),
    filterText: '{',
    insertTextFormat: InsertTextFormat.Snippet,
    textEdit: edit(place, `{${example}}`),
    command: TRIGGER_SUGGEST,
  };
}

function listItems(place: Place, ctx: ExpressionContext, lhsType: Type | undefined): OffsetCompletionItem[] {
  const items: OffsetCompletionItem[] = [];
  const seen = new Set<string>();
  (ctx.listNames ?? []).forEach((name, i) => {
    if (seen.has(name)) return;
    seen.add(name);
    items.push({
      label: `$${name}`,
      kind: CompletionItemKind.Reference,
      detail: 'list',
      sortText: sortKey(20, i),
      filterText: `$${name}`,
      textEdit: edit(place, `$${name}`),
    });
  });
  // The managed lists hold IP addresses.
  if (lhsType === undefined || lhsType.kind === 'Ip') {
    Object.keys(MANAGED_LIST_DOCS).forEach((name, i) => {
      if (seen.has(name)) return;
      items.push({
        label: `$${name}`,
        kind: CompletionItemKind.Reference,
        detail: 'managed IP list',
        documentation: { kind: 'markdown', value: MANAGED_LIST_DOCS[name] },
        sortText: sortKey(30, i),
        filterText: `$${name}`,
        textEdit: edit(place, `$${name}`),
      });
    });
  }
  return items;
}

// ---------------------------------------------------------------------------------------
// Map keys

function keysOf(field: string, ctx: ExpressionContext | undefined): string[] {
  const header = Object.hasOwn(HEADER_MAPS, field) ? HEADER_MAPS[field] : undefined;
  const samples = ctx?.sampleKeys && Object.hasOwn(ctx.sampleKeys, field) ? ctx.sampleKeys[field] : [];
  const keys: string[] = [];
  const seen = new Set<string>();
  for (const k of [...samples.map((s) => (header ? s.toLowerCase() : s)), ...(header ?? [])]) {
    if (seen.has(k)) continue;
    seen.add(k);
    keys.push(k);
  }
  return keys;
}

function mapKeyItems(target: ValueInfo, place: Place, ctx: ExpressionContext, inString: boolean): OffsetCompletionItem[] {
  if (!target.field || target.type?.kind !== 'Map') return [];
  const field = target.field.name;
  const samples = new Set(ctx.sampleKeys && Object.hasOwn(ctx.sampleKeys, field) ? ctx.sampleKeys[field].map((s) => (Object.hasOwn(HEADER_MAPS, field) ? s.toLowerCase() : s)) : []);
  return keysOf(field, ctx).map((k, i) => {
    const quoted = quote(k);
    return {
      label: quoted,
      kind: CompletionItemKind.Property,
      detail: samples.has(k) ? `key seen in samples` : 'common header',
      sortText: sortKey(samples.has(k) ? 10 : 20, i),
      filterText: inString ? quoted : k,
      textEdit: edit(place, quoted, false),
    };
  });
}

function indexKeyItems(target: ValueInfo, place: Place, ctx: ExpressionContext): OffsetCompletionItem[] {
  const t = target.type;
  if (!t || (t.kind !== 'Map' && t.kind !== 'Array')) return [];
  const noSpace: Place = { ...place, needsSpace: false };
  const star: OffsetCompletionItem = {
    label: '*',
    kind: CompletionItemKind.Operator,
    detail: 'every element',
    sortText: sortKey(30, 0),
    filterText: '*',
    textEdit: edit(noSpace, '*', false),
  };
  if (t.kind === 'Array') {
    return [{ label: '0', kind: CompletionItemKind.Value, detail: 'first element', sortText: sortKey(10, 0), filterText: '0', textEdit: edit(noSpace, '0', false) }, star];
  }
  return [...mapKeyItems(target, noSpace, ctx, false), star];
}

// ---------------------------------------------------------------------------------------
// Literal function arguments

const LITERAL_HINTS: Readonly<Record<string, Readonly<Record<number, readonly (readonly [string, string])[]>>>> = {
  url_decode: { 1: [['r', 'decode repeatedly'], ['u', 'also decode %uXXXX'], ['ur', 'both']] },
  encode_base64: { 1: [['u', 'URL-safe alphabet'], ['p', 'add "=" padding'], ['up', 'both']] },
  wildcard_replace: { 3: [['s', 'case-sensitive']] },
  is_timed_hmac_valid_v0: { 5: [['s', 'URL-safe Base64 without padding']] },
};

function literalArgumentItems(frame: Extract<Frame, { kind: 'call' }>, place: Place, ctx: ExpressionContext): OffsetCompletionItem[] {
  const first = frame.args[0];
  if (frame.argIndex === 1 && first?.field && (frame.name === 'has_key' || frame.name === 'has_value')) {
    if (frame.name === 'has_key') return mapKeyItems({ ...first, type: first.field.type }, place, ctx, place.inString);
    return valueItems({ ...first, valuesOf: first.field }, place, new Set());
  }
  const hints = Object.hasOwn(LITERAL_HINTS, frame.name) ? LITERAL_HINTS[frame.name][frame.argIndex] : undefined;
  if (!hints) return [];
  return hints.map(([v, detail], i) => ({
    label: quote(v),
    kind: CompletionItemKind.Value,
    detail,
    sortText: sortKey(10, i),
    filterText: place.inString ? quote(v) : v,
    textEdit: edit(place, quote(v)),
  }));
}
