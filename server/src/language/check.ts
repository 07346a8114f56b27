/**
 * The checker: syntax tree -> typed IR plus diagnostics, against a scheme.
 *
 * It follows the engine's rules (types, the operator/type matrix, `[*]`, function
 * arguments checked left to right: count, kind, type, value) and its wording, but
 * unlike the engine it keeps going after an error so that an editor can show every
 * problem at once. The IR is returned only when there is no error.
 */
import type * as A from './ast';
import type { Diagnostic, DiagnosticCode } from './diagnostics';
import { error, warning } from './diagnostics';
import type { IrArg, IrBool, IrTest, IrValue, Value } from './ir';
import { parseIpAddr, parseIpSetItem } from './ip';
import {
  decodeMapKey,
  decodeQuoted,
  decodeRaw,
  decodeRegexQuoted,
  parseHexBytes,
  parseIndexLiteral,
  parseInt64,
  parseIntSetItems,
  parseHexBytesItems,
  validateListName,
  type LitError,
  type LitResult,
} from './literals';
import { lintComparison, lintMapKey } from './lints';
import { binaryToUtf8, charLength, charOffset, longerThan } from './bytes';
import { NESTING_HINT } from './parse';
import { unknownOperator } from './operatorTypo';
import { checkRegex } from './regex';
import { httpScheme, phaseAllows, planAllows, readsAnswer, suggestNames } from './scheme/index';
import { managedOnlyMessage } from './scheme/managed';
import { RATELIMIT_FIELDS_WORDS, rateLimitFieldAllowed, rateLimitFieldPlan } from './scheme/rateLimitFields';
import { isDiscouraged, isStringOnly, operatorsFor } from './scheme/operators';
import type { FunctionDef, ParamDef, Phase, Plan, Scheme, TypePattern } from './scheme/types';
import { BOOL, BYTES, INT, IP, arrayOf, sameType, typeToString, type Type } from './types';
import { parseWildcard } from './wildcard';

export interface CheckOptions {
  readonly scheme?: Scheme;
  /** The rule's phase: fields and functions not available there are warned about. */
  readonly phase?: Phase;
  /** The zone's plan: features above it are warned about. */
  readonly plan?: Plan;
  /** Names of the account's lists; when given, other names are warned about. */
  readonly listNames?: readonly string[];
  /** Field-to-field comparisons (Cloudflare, 2026). Default true. */
  readonly dynamicComparisons?: boolean;
  /** Managed rulesets may use managed-only fields and functions. */
  readonly allowManaged?: boolean;
  /** A rate limiting rule's `counting_expression`: matched once the origin answered, so the response fields are available too. */
  readonly countingExpression?: boolean;
  /** The rule is in an account-level ruleset (kind `root` or `custom`): its rate limiting rules read neither the answer nor lists. */
  readonly account?: boolean;
}

export const MAX_EXPRESSION_LENGTH = 4096;
export const MAX_NESTING = 128;
export const MAX_REGEXES = 64;

/** Lists Cloudflare manages for every account. */
export const MANAGED_LISTS = ['cf.open_proxies', 'cf.anonymizer', 'cf.vpn', 'cf.malware', 'cf.botnetcc'];

/**
 * Beyond this a user expression is not parsed at all, only refused as too long: parsing
 * megabytes would take seconds (and gigabytes) to say what the length already says.
 */
export const PARSE_LIMIT = 16 * MAX_EXPRESSION_LENGTH;

/** Whether an expression is over MAX_EXPRESSION_LENGTH characters (code points: an emoji is one). */
export function isTooLong(text: string): boolean {
  return longerThan(text, MAX_EXPRESSION_LENGTH);
}

/** The refusal of an expression over MAX_EXPRESSION_LENGTH characters, from its first character past the limit. */
export function tooLong(text: string): Diagnostic {
  return error(
    'expression-too-long',
    charOffset(text, MAX_EXPRESSION_LENGTH),
    text.length,
    `expression is ${charLength(text)} characters long; the limit is ${MAX_EXPRESSION_LENGTH}`,
    'Shorten it: merge comparisons into sets (`in {…}`), or move values into a list (`in $name`).',
  );
}

interface Typed {
  readonly ir?: IrValue;
  /** The value's type, or the element type when `each`. Undefined after an error. */
  readonly type?: Type;
  readonly each: boolean;
}

interface BoolTyped {
  readonly ir?: IrBool;
  /** 'Bool' or 'Array<Bool>'; undefined after an error. */
  readonly array?: boolean;
}

const ARRAY_BOOL = arrayOf(BOOL);

export function checkAst(ast: A.Expr, text: string, options: CheckOptions = {}): { ir?: IrBool; diagnostics: Diagnostic[] } {
  const c = new Checker(text, options);
  const root = c.expr(ast, 0);
  if (root.array === true) {
    c.err('type-mismatch', ast.span, 'expected value of type Bool, but got Array<Bool>', 'The whole expression must be a condition. Wrap an element-wise comparison in `any(…)` or `all(…)`.');
  }
  c.finish();
  const hasError = c.diagnostics.some((d) => d.severity === 'error');
  return { ir: hasError ? undefined : root.ir, diagnostics: c.diagnostics };
}

class Checker {
  readonly diagnostics: Diagnostic[] = [];
  private readonly scheme: Scheme;
  private regexCount = 0;
  private readonly replaceCalls: A.FunctionCall[] = [];
  private nestingReported = false;
  /** In a rate limiting rule: the first response field, list and custom list it reads (rateLimitRestrictions). */
  private responseField: { name: string; span: A.Span } | undefined;
  private anyList: { name: string; span: A.Span } | undefined;
  private customList: { name: string; span: A.Span } | undefined;

  constructor(
    private readonly text: string,
    private readonly options: CheckOptions,
  ) {
    this.scheme = options.scheme ?? httpScheme;
    // The 4,096-character limit is the API's for user rules; managed rules (converted CRS
    // regexes alone reach 4 KB) are not subject to it.
    if (!options.allowManaged && isTooLong(text)) this.diagnostics.push(tooLong(text));
  }

  err(code: DiagnosticCode, span: A.Span, message: string, hint?: string, data?: Record<string, unknown>): void {
    this.diagnostics.push(error(code, span.start, span.end, message, hint, data));
  }

  warn(code: DiagnosticCode, span: A.Span, message: string, hint?: string, data?: Record<string, unknown>): void {
    this.diagnostics.push(warning(code, span.start, span.end, message, hint, data));
  }

  finish(): void {
    this.checkReplaceCalls();
    this.rateLimitRestrictions();
    if (this.regexCount > MAX_REGEXES) {
      this.warn('too-many-regexes', { start: 0, end: this.text.length }, `the expression uses ${this.regexCount} regular expressions; a rule may use at most ${MAX_REGEXES}`, 'Combine patterns with `|`, or use `in {…}` / `contains` where a regex is not needed.');
    }
  }

  /** What the API refuses in a rate limiting rule for what it reads (reference traffic-events-terraform.md §2.1). */
  private rateLimitRestrictions(): void {
    if (this.options.phase !== 'http_ratelimit') return;
    const answer = this.responseField;
    if (this.options.account) {
      const list = this.anyList;
      // The not-in-phase warning already refuses a response field in a rule's own expression.
      if (answer && this.options.countingExpression) {
        this.warn('ratelimit-restriction', answer.span, `an account's rate limiting rules cannot read the origin's answer (\`${answer.name}\`)`, "Count by the request's fields, or move the rule to a zone's rate limiting ruleset, where a counting expression may read the answer.");
      }
      if (list) this.warn('ratelimit-restriction', list.span, `an account's rate limiting rules cannot use lists (\`$${list.name}\`)`, "Match the values with a set `{…}` instead, or move the rule to a zone's rate limiting ruleset.");
      return;
    }
    const list = this.customList;
    if (answer && list && this.options.countingExpression) {
      this.warn('ratelimit-restriction', list.span, `a counting expression that reads the origin's answer (\`${answer.name}\`) cannot use custom lists (\`$${list.name}\`)`, 'Match the values with a set `{…}` instead, or count by the request alone.');
    }
  }

  private depth(n: number, span: A.Span): void {
    if (n > MAX_NESTING && !this.nestingReported) {
      this.nestingReported = true;
      this.err('nesting-too-deep', span, `maximum nesting depth exceeded (limit: ${MAX_NESTING})`, NESTING_HINT);
    }
  }

  /** A logical expression: Bool, or Array<Bool> element-wise. */
  expr(e: A.Expr, depth: number): BoolTyped {
    switch (e.kind) {
      case 'group':
        this.depth(depth + 1, e.span);
        return this.expr(e.inner, depth + 1);
      case 'not': {
        this.depth(depth + 1, e.span);
        const x = this.expr(e.operand, depth + 1);
        if (x.array === undefined || !x.ir) return { array: x.array };
        return { ir: { k: 'not', x: x.ir, array: x.array }, array: x.array };
      }
      case 'logical':
        return this.logical(e, depth);
      case 'quantifier':
        return this.quantifier(e, depth);
      case 'comparison':
        return this.comparison(e, depth);
    }
  }

  private logical(e: A.LogicalExpr, depth: number): BoolTyped {
    const items = e.items.map((i) => this.expr(i, depth));
    const first = items[0].array;
    let ok = first !== undefined;
    items.forEach((item, i) => {
      if (i === 0 || item.array === undefined || first === undefined) {
        if (item.array === undefined) ok = false;
        return;
      }
      if (item.array !== first) {
        ok = false;
        this.err(
          'type-mismatch',
          e.items[i].span,
          `expected value of type ${first ? 'Array<Bool>' : 'Bool'}, but got ${item.array ? 'Array<Bool>' : 'Bool'}`,
          'Both sides of a logical operator must be conditions, or both element-wise (`[*]`) conditions. Wrap an element-wise one in `any(…)` or `all(…)`.',
        );
      }
    });
    if (!ok) return { array: first };
    return { ir: { k: 'logical', op: e.op, items: items.map((i) => i.ir!), array: first! }, array: first };
  }

  private quantifier(e: A.QuantifierExpr, depth: number): BoolTyped {
    this.depth(depth + 1, e.span);
    const arg = e.arg;
    const bad = (got: string) =>
      this.err('type-mismatch', arg.span, `expected value of type Array<Bool>, but got ${got}`, `\`${e.name}(…)\` takes an element-wise condition, e.g. \`${e.name}(http.request.headers.names[*] eq "x-debug")\`.`);
    if (arg.kind === 'literal') {
      bad(this.literalTypeName(arg));
      return {};
    }
    let x: BoolTyped;
    if (arg.kind === 'field' || arg.kind === 'call' || arg.kind === 'index') x = this.comparison({ kind: 'comparison', lhs: arg, span: arg.span }, depth + 1, true);
    else x = this.expr(arg, depth + 1);
    if (x.array === undefined) return { array: false };
    if (!x.array) {
      bad('Bool');
      return { array: false };
    }
    return { ir: x.ir && { k: 'quantifier', q: e.name, x: x.ir }, array: false };
  }

  /** A comparison, or a bare operand (Bool, Array<Bool>, or a `[*]` stream of Bool). */
  private comparison(e: A.ComparisonExpr, depth: number, inQuantifier = false): BoolTyped {
    const lhs = this.value(e.lhs, depth);
    if (!e.op || !e.rhs) {
      if (!lhs.type) return {};
      if (lhs.type.kind === 'Bool') return { ir: lhs.ir && { k: 'value', x: lhs.ir, array: lhs.each }, array: lhs.each };
      if (!lhs.each && lhs.type.kind === 'Array' && lhs.type.of.kind === 'Bool') {
        return { ir: lhs.ir && { k: 'value', x: lhs.ir, array: true }, array: true };
      }
      const shown = lhs.each ? typeToString(arrayOf(lhs.type)) : typeToString(lhs.type);
      if (inQuantifier) {
        this.err('type-mismatch', e.lhs.span, `expected value of type Array<Bool>, but got ${shown}`, 'Compare the elements, e.g. `any(x[*] eq "value")`.');
      } else {
        this.err('expected-comparison-op', { start: e.lhs.span.end, end: e.lhs.span.end }, 'expected ComparisonOp', `\`${this.text.slice(e.lhs.span.start, e.lhs.span.end)}\` is ${shown}, not a condition: compare it, e.g. with \`eq\`, \`contains\` or \`in\`.`);
      }
      return {};
    }
    const op = e.op;
    if (!lhs.type) {
      this.rhsOnly(e.rhs, depth);
      return {};
    }
    const t = lhs.type;
    const lhsIsBool = t.kind === 'Bool' || (t.kind === 'Array' && t.of.kind === 'Bool' && !lhs.each);
    if (lhsIsBool) {
      this.err('unrecognised-input', { start: op.span.start, end: e.rhs.span.end }, 'unrecognised input', `\`${this.text.slice(e.lhs.span.start, e.lhs.span.end)}\` is already a condition: write it alone, or negate it with \`not\`.`);
      return {};
    }
    if (!allowedOps(t).includes(op.op)) {
      const shown = lhs.each ? typeToString(t) : typeToString(t);
      this.err('operator-type-mismatch', op.span, `cannot perform this operation on type ${shown}`, opHint(t, op.op));
      return {};
    }
    const test = this.test(e, t, lhs, depth);
    if (!test || !lhs.ir) return { array: lhs.each };
    lintComparison(this.scheme, e, test, this.text, (d) => this.diagnostics.push(d));
    if (isDiscouraged(op.op, t)) {
      this.warn('ip-ordering', op.span, 'ordering comparisons on IP addresses are not supported by Cloudflare\'s documentation', 'Use a range or CIDR in a set instead: `ip.src in {192.0.2.0..192.0.2.127}`. IPv4 and IPv6 never compare.');
    }
    return { ir: { k: 'compare', lhs: lhs.ir, test, array: lhs.each }, array: lhs.each };
  }

  /** Checks a right-hand side whose left side failed, so its own errors still show. */
  private rhsOnly(rhs: A.Rhs, depth: number): void {
    if (rhs.kind === 'field' || rhs.kind === 'call' || rhs.kind === 'index') this.value(rhs, depth);
  }

  private test(e: A.ComparisonExpr, t: Type, lhs: Typed, depth: number): IrTest | undefined {
    const op = e.op!.op;
    const rhs = e.rhs!;
    if (rhs.kind === 'field' || rhs.kind === 'call' || rhs.kind === 'index') {
      // `http.host equals`: the grammar read `eq` then the name `uals`.
      if (rhs.span.start === e.op!.span.end && /^[a-z_]+$/i.test(e.op!.text)) {
        const end = e.op!.span.start + (/^[A-Za-z_]+/.exec(this.text.slice(e.op!.span.start))?.[0].length ?? 0);
        const typo = unknownOperator(this.text, e.op!.span.start, end, t);
        if (typo) return this.diagnostics.push(typo), undefined;
      }
      if (this.options.dynamicComparisons === false) {
        this.err('dynamic-comparison-disabled', rhs.span, this.expectedLiteralMessage(t), 'Comparing a field with another field is turned off (setting `rulesmith.dynamicComparisons`).');
        return undefined;
      }
      const r = this.value(rhs, depth);
      if (!r.type) return undefined;
      if (!['eq', 'ne', 'lt', 'le', 'gt', 'ge'].includes(op)) {
        this.err('operator-type-mismatch', rhs.span, `expected a literal after \`${e.op!.text}\``, 'Only `eq ne lt le gt ge` compare a field with another field.');
        return undefined;
      }
      if (r.each || !sameType(r.type, t)) {
        const got = typeToString(r.each ? arrayOf(r.type) : r.type);
        const lhsText = this.text.slice(e.lhs.span.start, e.lhs.span.end);
        const rhsText = this.text.slice(rhs.span.start, rhs.span.end);
        this.err('type-mismatch', rhs.span, `expected value of type ${typeToString(t)}, but got ${got}`, `\`${lhsText}\` is ${typeToString(t)} and \`${rhsText}\` is ${got}: a field compares only with a value of the same type.`);
        return undefined;
      }
      return r.ir && { k: 'dynamic', op: op as 'eq', rhs: r.ir };
    }
    if (op === 'in') return this.inTest(e, t, rhs);
    if (rhs.kind !== 'literal') return undefined; // sets and lists only follow `in` (grammar)
    switch (op) {
      case 'matches': {
        this.regexCount++;
        // A raw string after `matches` is regex source as written; a quoted one is lexed as a regex literal.
        const src = rhs.form === 'raw' ? (this.lit(decodeRaw(rhs.text), rhs) === undefined ? undefined : rawText(rhs)) : this.lit(decodeRegexQuoted(rhs.text), rhs);
        if (src === undefined) return undefined;
        const re = checkRegex(src);
        if (!re.ok) {
          this.err('invalid-regex', rhs.span, re.message, re.hint ?? 'Cloudflare uses Rust regex syntax (RE2-like): no look-around, no backreferences. Test the pattern with the Rust flavour of regex101.');
          return undefined;
        }
        return { k: 'matches', pattern: src };
      }
      case 'wildcard':
      case 'strict wildcard': {
        const pattern = this.bytesLiteral(rhs);
        if (pattern === undefined) return undefined;
        const w = parseWildcard(pattern, { literalLength: rhs.span.end - rhs.span.start });
        if (!w.ok) return this.litError(w, rhs), undefined;
        return { k: 'wildcard', pattern, strict: op === 'strict wildcard' };
      }
      case 'bitwise_and': {
        const v = this.intLiteral(rhs);
        return v === undefined ? undefined : { k: 'bitwise_and', value: v };
      }
      case 'contains': {
        const v = this.bytesLiteral(rhs, true);
        return v === undefined ? undefined : { k: 'contains', value: v };
      }
      default: {
        const k = op as 'eq';
        if (t.kind === 'Bytes') {
          const v = this.bytesLiteral(rhs, true);
          return v === undefined ? undefined : { k, value: v };
        }
        if (t.kind === 'Int') {
          const v = this.intLiteral(rhs);
          return v === undefined ? undefined : { k, value: v };
        }
        const v = this.ipLiteral(rhs);
        return v === undefined ? undefined : { k, value: v };
      }
    }
  }

  private inTest(e: A.ComparisonExpr, t: Type, rhs: A.Rhs): IrTest | undefined {
    if (rhs.kind === 'list') {
      const v = validateListName(rhs.name, this.text.slice(rhs.span.end));
      if (!v.ok) return this.litError(v, { span: { start: rhs.span.start + 1, end: rhs.span.end } }), undefined;
      const field = e.lhs.kind === 'field' ? e.lhs.name : undefined;
      const listable = t.kind === 'Ip' || field === 'http.host' || field === 'ip.src.asnum' || field === 'http.request.full_uri';
      if (!listable) {
        this.err('operator-type-mismatch', e.op!.span, `cannot perform this operation on type ${typeToString(t)}`, 'Lists hold IP addresses (any IP field), hostnames (`http.host`), ASNs (`ip.src.asnum`) or redirects (`http.request.full_uri`). Use a set `{…}` here.');
        return undefined;
      }
      this.anyList ??= { name: rhs.name, span: rhs.span };
      if (!MANAGED_LISTS.includes(rhs.name)) this.customList ??= { name: rhs.name, span: rhs.span };
      const known = this.options.listNames;
      if (known && !known.includes(rhs.name) && !MANAGED_LISTS.includes(rhs.name)) {
        this.warn('unknown-list', rhs.span, `list "${rhs.name}" does not exist in this account`, known.length ? `Known lists: ${known.slice(0, 10).join(', ')}.` : 'Create the list first (Manage Account > Configurations > Lists).', { name: rhs.name });
      }
      return { k: 'inList', name: rhs.name, type: t };
    }
    if (rhs.kind !== 'set') return undefined;
    let failed = false;
    const commaHint = 'Set elements are separated by spaces, not commas: `{"a" "b"}`.';
    if (t.kind === 'Bytes') {
      const values: string[] = [];
      for (const item of rhs.items) {
        if (item.form === 'bare') {
          const r = parseHexBytesItems(item.text, this.text.slice(item.span.end));
          if (!r.ok) {
            this.litError(r, item, item.text === ',' ? commaHint : undefined);
            failed = true;
          } else values.push(...r.value);
          continue;
        }
        const v = this.bytesLiteral(item);
        if (v === undefined) failed = true;
        else values.push(v);
      }
      return failed ? undefined : { k: 'inBytes', values };
    }
    if (t.kind === 'Int') {
      const ranges = [];
      for (const item of rhs.items) {
        if (item.form !== 'bare') {
          this.err('invalid-integer', item.span, 'expected digit', `\`${this.text.slice(e.lhs.span.start, e.lhs.span.end)}\` is a number: write numbers without quotes, e.g. \`{80 443 8000..8099}\`.`);
          failed = true;
          continue;
        }
        // Set elements need no separator when tokens are self-delimiting: `{1-2}` is 1 and -2.
        const r = parseIntSetItems(item.text);
        if (!r.ok) {
          this.litError(r, item, item.text === ',' ? commaHint : undefined);
          failed = true;
        } else ranges.push(...r.value);
      }
      return failed ? undefined : { k: 'inInt', ranges };
    }
    const ranges = [];
    for (const item of rhs.items) {
      if (item.form !== 'bare') {
        this.err('invalid-ip', item.span, 'expected IP address character', 'Write addresses without quotes: `{192.0.2.0/24 2001:db8::/32}`.');
        failed = true;
        continue;
      }
      const r = parseIpSetItem(item.text);
      if (!r.ok) {
        this.litError(r, item, item.text === ',' ? commaHint : undefined);
        failed = true;
      } else ranges.push(r.value);
    }
    return failed ? undefined : { k: 'inIp', ranges };
  }

  private expectedLiteralMessage(t: Type): string {
    return t.kind === 'Int' ? 'expected digit' : t.kind === 'Ip' ? 'expected IP address character' : 'expected " or r';
  }

  /** Reports a literal decoding error at the literal's position. */
  private litError(r: Extract<LitResult<unknown>, { ok: false }>, at: { span: A.Span }, hint?: string): void {
    this.err(r.code, { start: at.span.start + r.start, end: at.span.start + Math.max(r.end, r.start) }, r.message, hint ?? r.hint, r.data && { ...r.data });
  }

  private lit<T>(r: LitResult<T>, at: { span: A.Span }): T | undefined {
    if (!r.ok) return this.litError(r, at), undefined;
    return r.value;
  }

  /** Bytes from a quoted or raw string, or (where allowed) hex bytes. */
  private bytesLiteral(l: A.Literal, hexAllowed = false, hint?: string): string | undefined {
    const after = this.text.slice(l.span.end);
    if (l.form === 'quoted') return this.lit(decodeQuoted(l.text, after), l);
    if (l.form === 'raw') return this.lit(decodeRaw(l.text), l);
    if (!hexAllowed) {
      this.err('syntax-error', l.span, 'expected " or r', 'Write the pattern as a quoted string `"…"` or a raw string `r"…"`.');
      return undefined;
    }
    const r = parseHexBytes(l.text, after);
    if (!r.ok) return this.litError(r, l, this.gluedHint(r, l) ?? hint ?? 'Strings need double quotes: `"value"`. Unquoted values are read as hex bytes (`41:42`).'), undefined;
    return r.value;
  }

  /** A bare literal's value; an error that reaches into a glued keyword says so. */
  private bareLit<T>(r: LitResult<T>, l: A.Literal): T | undefined {
    if (!r.ok) return this.litError(r, l, this.gluedHint(r, l)), undefined;
    return r.value;
  }

  private gluedHint(r: LitError, l: A.Literal): string | undefined {
    if (r.end <= l.text.length || this.gluedAfter(l) === '') return undefined;
    const word = /^[a-z]+/i.exec(this.gluedAfter(l))?.[0] ?? '';
    return `The value runs into \`${word}\`: the engine reads on while the characters fit the value. Put a space before \`${word}\`.`;
  }

  private intLiteral(l: A.Literal): Value & (number | bigint) | undefined {
    if (l.form !== 'bare') {
      this.err('invalid-integer', l.span, 'expected digit', 'This field is a number: write it without quotes, e.g. `443`.');
      return undefined;
    }
    return this.bareLit(parseInt64(l.text, this.gluedAfter(l)), l);
  }

  private ipLiteral(l: A.Literal) {
    if (l.form !== 'bare') {
      this.err('invalid-ip', l.span, 'expected IP address character', 'Write the address without quotes, e.g. `ip.src eq 192.0.2.1`.');
      return undefined;
    }
    return this.bareLit(parseIpAddr(l.text, this.gluedAfter(l)), l);
  }

  /** The source after a bare literal that a keyword is glued to (`5or ssl`), else ''. */
  private gluedAfter(l: A.Literal): string {
    return /^[A-Za-z]/.test(this.text.charAt(l.span.end)) ? this.text.slice(l.span.end) : '';
  }

  private literalTypeName(l: A.Literal): string {
    return typeToString(this.literalArg(l, undefined)?.type ?? BYTES);
  }

  /** A value: field, function call, or index access. */
  value(v: A.ValueExpr, depth: number): Typed {
    switch (v.kind) {
      case 'field':
        return this.field(v);
      case 'call':
        return this.call(v, depth);
      case 'index':
        return this.index(v, depth);
    }
  }

  private field(v: A.FieldRef): Typed {
    const empty = emptySegment(v.name);
    if (empty >= 0) {
      this.err('syntax-error', { start: v.span.start + empty, end: v.span.start + empty + 1 }, 'expected identifier character', 'Field names are dot-separated words, e.g. `http.request.uri.path`.');
      return { each: false };
    }
    const def = this.scheme.fields.get(v.name);
    if (!def) {
      const fn = this.scheme.functions.get(v.name);
      const suggestions = suggestNames(v.name, this.scheme);
      this.err(
        'unknown-identifier',
        v.span,
        'unknown identifier',
        fn
          ? `\`${v.name}\` is a function: call it, e.g. \`${fn.signature}\`.`
          : suggestions.length
            ? `\`${v.name}\` is not a field: did you mean ${suggestions.map((s) => `\`${s}\``).join(' or ')}?`
            : `\`${v.name}\` is not a field or function of the Rules language. Field names are lower case and dot-separated, e.g. \`http.request.uri.path\`.`,
        { suggestions },
      );
      return { each: false };
    }
    if (def.managedOnly && !this.options.allowManaged) {
      this.err('managed-only', v.span, managedOnlyMessage(v.name), 'Managed rulesets (the OWASP Core Ruleset) use it; in your own rules use the public fields and functions.');
      return { each: false };
    }
    if (def.deprecated) {
      this.diagnostics.push({
        ...warning('deprecated-field', v.span.start, v.span.end, `\`${v.name}\` is deprecated; use \`${def.deprecated.replacement}\``, `Replace it with \`${def.deprecated.replacement}\` (same value).`, { replacement: def.deprecated.replacement }),
      });
    }
    this.entitlement(v.span, v.name, 'field', def.plan, def.planNote, def.phases);
    this.rateLimitField(v.span, v.name, def);
    return { ir: { k: 'field', name: v.name, type: def.type, each: false }, type: def.type, each: false };
  }

  /**
   * A field in a rate limiting rule: what the zone's plan lets it read (scheme/rateLimitFields.ts),
   * and whether it reads the answer. Not for a field already refused here (its own plan, the
   * phase: one warning per field), nor in an account's ruleset, which has no plan.
   */
  private rateLimitField(span: A.Span, name: string, def: { readonly plan?: Plan; readonly phases?: readonly Phase[] }): void {
    const { plan, phase, countingExpression } = this.options;
    if (phase !== 'http_ratelimit' || !phaseAllows(def, phase, countingExpression === true)) return;
    if (readsAnswer(def)) {
      this.responseField ??= { name, span };
      return;
    }
    if (!plan || this.options.account || !planAllows(def.plan, plan) || rateLimitFieldAllowed(plan, name)) return;
    const needed = rateLimitFieldPlan(name);
    this.warn('plan-required', span, `\`${name}\` in a rate limiting rule requires the ${capital(needed)} plan${needed === 'enterprise' ? '' : ' or above'}`, `On the ${capital(plan)} plan a rate limiting rule may read ${RATELIMIT_FIELDS_WORDS[plan]}; the API rejects the rule.`, { plan: needed });
  }

  private entitlement(span: A.Span, name: string, what: string, plan?: Plan, planNote?: string, phases?: readonly Phase[]): void {
    const { plan: actual, phase } = this.options;
    if (actual && !planAllows(plan, actual)) {
      this.warn('plan-required', span, `\`${name}\` requires the ${capital(plan!)} plan or above${planNote ? ` (${planNote})` : ''}`, `This zone is on the ${capital(actual)} plan; the API rejects the rule.`, { plan });
    } else if (actual && planNote && plan === undefined) {
      // Add-ons cannot be known from the plan alone; say nothing.
    }
    if (phase && phases && !phaseAllows({ phases }, phase, this.options.countingExpression === true)) {
      const hint =
        phase === 'http_ratelimit' && readsAnswer({ phases })
          ? "A rate limiting rule's expression is matched before the request goes on: read the origin's answer in its counting expression (`ratelimit.counting_expression`)."
          : `Available in: ${phases.join(', ')}.`;
      this.warn('not-in-phase', span, `the ${what} \`${name}\` is not available in phase ${phase}`, hint, { phases });
    }
  }

  private index(v: A.IndexAccess, depth: number): Typed {
    const target = this.value(v.target, depth);
    if (!target.type) return { each: false };
    const t = target.type;
    const key = v.key;
    if (key.kind === 'each') {
      if (t.kind !== 'Array' && t.kind !== 'Map') {
        this.err('invalid-index-access', key.span, `cannot access index MapEach for type ${typeToString(t)}`, '`[*]` applies to arrays and maps only.');
        return { each: false };
      }
      return {
        ir: target.ir && { k: 'index', target: target.ir, index: { kind: 'each' }, type: t.of, each: true },
        type: t.of,
        each: true,
      };
    }
    const lit = key.literal;
    if (lit.form === 'quoted') {
      const k = decodeMapKey(lit.text, this.text.slice(lit.span.end));
      if (!k.ok) return this.litError(k, lit), { each: false };
      if (t.kind !== 'Map') {
        this.err('invalid-index-access', key.span, `cannot access index MapKey(${JSON.stringify(this.text.slice(lit.span.start + 1, lit.span.end - 1))}) for type ${typeToString(t)}`, t.kind === 'Array' ? 'Arrays are indexed by position: `[0]`.' : 'Only maps are indexed by key.');
        return { each: false };
      }
      lintMapKey(v, k.value, this.text, (d) => this.diagnostics.push(d));
      return {
        ir: target.ir && { k: 'index', target: target.ir, index: { kind: 'key', key: k.value }, type: t.of, each: target.each },
        type: t.of,
        each: target.each,
      };
    }
    const i = parseIndexLiteral(lit.text);
    if (!i.ok) return this.litError(i, lit), { each: false };
    if (t.kind !== 'Array') {
      this.err('invalid-index-access', key.span, `cannot access index ArrayIndex(${i.value}) for type ${typeToString(t)}`, t.kind === 'Map' ? 'Maps are indexed by a quoted key: `["name"]`.' : 'Only arrays are indexed by position.');
      return { each: false };
    }
    return {
      ir: target.ir && { k: 'index', target: target.ir, index: { kind: 'array', i: i.value }, type: t.of, each: target.each },
      type: t.of,
      each: target.each,
    };
  }

  private call(v: A.FunctionCall, depth: number): Typed {
    this.depth(depth + 1, v.span);
    const def = this.scheme.functions.get(v.name);
    if (def?.managedOnly && !this.options.allowManaged) {
      this.err('managed-only', v.nameSpan, managedOnlyMessage(v.name), 'Managed rulesets (the OWASP Core Ruleset) use it; in your own rules use the public functions, e.g. `lower`, `url_decode`, `matches`.');
      for (const a of v.args) this.arg(a, depth + 1);
      return { each: false };
    }
    if (!def && /^[0-9]/.test(v.name)) {
      // `5or(ssl)`: a value glued to a keyword where a condition starts, not a function.
      const hint = `\`${v.name}\` is not a name (names start with a letter), and a condition cannot start with a value: compare a field with it, e.g. \`ip.src.asnum eq 5 or (…)\`.`;
      this.err('unknown-identifier', v.nameSpan, 'unknown identifier', hint);
      for (const a of v.args) this.arg(a, depth + 1);
      return { each: false };
    }
    if (!def) {
      const suggestions = suggestNames(v.name, this.scheme).filter((s) => this.scheme.functions.has(s));
      const hint = suggestions.length
        ? `\`${v.name}\` is not a function: did you mean ${suggestions.map((s) => `\`${s}\``).join(' or ')}?`
        : `\`${v.name}\` is not a function of the Rules language: see the list of functions in the reference.`;
      this.err('unknown-function', v.nameSpan, 'unknown function', hint, { suggestions });
      for (const a of v.args) this.arg(a, depth + 1);
      return { each: false };
    }
    this.entitlement(v.nameSpan, v.name, 'function', def.plan, def.planNote, def.phases);
    if (def.oncePerExpression) this.replaceCalls.push(v);
    if (v.args.length < def.minArgs || v.args.length > def.maxArgs) {
      this.err('argument-count', v.span, 'invalid number of arguments', `${def.signature}`);
      return { each: false };
    }
    const types: Type[] = [];
    const irArgs: IrArg[] = [];
    let lifted = false;
    let ok = true;
    for (let i = 0; i < v.args.length; i++) {
      const a = v.args[i];
      const p = paramAt(def, i);
      const isLiteral = a.kind === 'literal';
      if (p.kind === 'field' && isLiteral) {
        this.err('argument-kind', a.span, `invalid kind of argument #${i}: expected argument of kind Field, but got Literal`, `Argument ${i + 1} of \`${def.name}\` must be a field or an expression, not a literal value.`);
        ok = false;
        continue;
      }
      if (p.kind === 'literal' && !isLiteral) {
        this.err('argument-kind', a.span, `invalid kind of argument #${i}: expected argument of kind Literal, but got Field`, `Argument ${i + 1} of \`${def.name}\` must be a literal value.`);
        ok = false;
        continue;
      }
      const arg = isLiteral ? this.literalArg(a, p.types, true) : this.arg(a, depth + 1);
      if (!arg?.type) {
        ok = false;
        continue;
      }
      if (arg.each) {
        if (i > 0) {
          this.err('invalid-map-each', a.span, 'invalid use of map each access operator', '`[*]` may only appear in the first argument of a function.');
          ok = false;
          continue;
        }
        lifted = true;
      }
      const expected = p.types.map((tp) => resolvePattern(tp, types));
      if (!expected.some((e) => e === 'any' || matchesPattern(e, arg.type!))) {
        this.err('argument-type', a.span, `invalid type of argument #${i}: expected value of type ${showExpected(expected)}, but got ${typeToString(arg.type)}`, `${def.signature}`);
        ok = false;
        continue;
      }
      if (isLiteral && def.validateLiteral && arg.ir?.k === 'literal') {
        const msg = def.validateLiteral(i, arg.ir.value);
        if (msg !== undefined) {
          this.err('argument-value', a.span, `invalid value of argument #${i}: invalid argument: ${JSON.stringify(msg)}`, `${def.signature}`);
          ok = false;
          continue;
        }
      }
      if (isLiteral && arg.ir?.k === 'literal' && i === 1 && typeof arg.ir.value === 'string' && !this.patternArgument(def.name, a, arg.ir.value, i)) {
        ok = false;
        continue;
      }
      if (def.name === 'remove_query_args' && i === 0 && !(a.kind === 'field' && (a.name === 'http.request.uri.query' || a.name === 'raw.http.request.uri.query'))) {
        this.err('argument-value', a.span, 'invalid value of argument #0: invalid argument: "expected http.request.uri.query or raw.http.request.uri.query"', 'remove_query_args works on the query string field only.');
        ok = false;
        continue;
      }
      types.push(arg.type);
      if (arg.ir) irArgs.push(arg.ir);
    }
    if (!ok) return { each: false };
    let ret: Type;
    try {
      ret = def.returns(types);
    } catch {
      return { each: false };
    }
    const type = lifted ? arrayOf(ret) : ret;
    return { ir: { k: 'call', fn: def.name, args: irArgs, type, lifted, each: false }, type, each: false };
  }

  /**
   * The pattern argument of regex_replace / wildcard_replace: a string literal whose
   * decoded bytes are then a regex or a wildcard (so a backslash is written twice).
   */
  private patternArgument(fn: string, a: A.Argument, bytes: string, i: number): boolean {
    if (fn === 'regex_replace') {
      this.regexCount++;
      const re = checkRegex(binaryToUtf8(bytes) ?? bytes);
      if (!re.ok) {
        this.err('invalid-regex', a.span, `invalid value of argument #${i}: ${re.message}`, re.hint ?? 'The pattern is a string first and a regex second: write `\\\\d` (or `r"\\d"`) for the regex `\\d`.');
        return false;
      }
    }
    if (fn === 'wildcard_replace') {
      const w = parseWildcard(bytes);
      if (!w.ok) {
        this.err('invalid-wildcard', a.span, `invalid value of argument #${i}: ${w.message}`, w.hint);
        return false;
      }
    }
    return true;
  }

  /** A non-literal function argument: a value, or a logical expression (Bool). */
  private arg(a: A.Argument, depth: number): { ir?: IrArg; type?: Type; each: boolean } | undefined {
    if (a.kind === 'literal') return this.literalArg(a, undefined, true);
    if (a.kind === 'field' || a.kind === 'call' || a.kind === 'index') {
      const v = this.value(a, depth);
      return { ir: v.ir && { k: 'val', x: v.ir }, type: v.type, each: v.each };
    }
    const x = this.expr(a, depth);
    if (x.array === undefined) return undefined;
    return { ir: x.ir && { k: 'expr', x: x.ir }, type: x.array ? ARRAY_BOOL : BOOL, each: false };
  }

  /**
   * A literal argument. The engine tries, in order: string, IP address, integer, hex
   * bytes; we prefer the reading the parameter accepts when several parse.
   */
  private literalArg(l: A.Literal, accepts: readonly TypePattern[] | undefined, report = false): { ir?: IrArg; type?: Type; each: boolean } | undefined {
    if (l.form !== 'bare') {
      const r = l.form === 'quoted' ? decodeQuoted(l.text) : decodeRaw(l.text);
      if (!r.ok) {
        if (report) this.litError(r, l);
        return undefined;
      }
      return { ir: { k: 'literal', type: BYTES, value: r.value }, type: BYTES, each: false };
    }
    // The engine's argument lexer takes a token whose first two characters look like a
    // name (`0x1`, `1a`) for an identifier, unless a hex-byte separator follows (`1a:2b`).
    if (/^[0-9][A-Za-z_]/.test(l.text) && !/^..[:.-]/.test(l.text)) {
      const n = parseInt64(l.text);
      const hint = n.ok ? `Hexadecimal integers are not accepted as function arguments: write ${String(n.value)}.` : 'A function argument is a field, a quoted string, a number or an IP address.';
      if (report) this.err('unknown-identifier', l.span, 'unknown identifier', hint);
      return undefined;
    }
    // The engine's order: IP address, then integer, then hex bytes. A token that starts
    // like a number is read as an integer, so `61:62` is an Int here, not two bytes.
    const ip = parseIpAddr(l.text);
    let type: Type;
    let r: LitResult<Value>;
    if (ip.ok) [type, r] = [IP, ip as LitResult<Value>];
    else if (/^-?[0-9]/.test(l.text)) [type, r] = [INT, parseInt64(l.text) as LitResult<Value>];
    else [type, r] = [BYTES, parseHexBytes(l.text, this.text.slice(l.span.end)) as LitResult<Value>];
    // A type the parameter does not take is reported by the caller, as the engine does.
    if (!r.ok && (!accepts || accepts.some((p) => !('kind' in p) || p.kind === type.kind))) {
      if (report) this.litError(r, l);
      return undefined;
    }
    return { ir: r.ok ? { k: 'literal', type, value: r.value } : undefined, type, each: false };
  }

  /** regex_replace / wildcard_replace: once each per expression, never nested in each other. */
  private checkReplaceCalls(): void {
    const seen = new Set<string>();
    for (const c of this.replaceCalls) {
      if (seen.has(c.name)) {
        this.err('replace-function-limit', c.nameSpan, `\`${c.name}\` may be used only once per expression`, 'Combine the replacements into one call.');
      }
      seen.add(c.name);
      const outer = this.replaceCalls.find((o) => o !== c && o.span.start <= c.span.start && c.span.end <= o.span.end);
      if (outer) {
        this.err('replace-function-limit', c.nameSpan, `\`${c.name}\` may not be nested inside \`${outer.name}\``, 'Apply one replacement per rule.');
      }
    }
  }
}

function rawText(l: A.Literal): string {
  const m = /^r(#*)"([\s\S]*)"\1$/.exec(l.text);
  return m ? m[2] : l.text;
}

function capital(s: string): string {
  return s[0].toUpperCase() + s.slice(1);
}

/** Index of the first empty dotted segment (`a..b`, `a.`), or -1. */
function emptySegment(name: string): number {
  const i = name.indexOf('..');
  if (i >= 0) return i + 1;
  return name.endsWith('.') ? name.length - 1 : -1;
}

function allowedOps(t: Type): readonly A.ComparisonOp[] {
  return operatorsFor(t).map((o) => o.op);
}

function opHint(t: Type, op: A.ComparisonOp): string {
  if (t.kind === 'Array' || t.kind === 'Map') {
    return t.kind === 'Map'
      ? 'Pick a value first: `["key"][0]`, or test every value with `any(…[*] … )`.'
      : 'Pick an element with `[0]`, or test every element with `any(…[*] …)`.';
  }
  if (isStringOnly(op)) {
    return `\`${op}\` works on strings; this value is ${typeToString(t)}.${t.kind === 'Ip' ? ' Use `in {192.0.2.0/24}` for networks.' : ''}`;
  }
  return `${typeToString(t)} supports: ${allowedOps(t).join(', ')}.`;
}

function paramAt(def: FunctionDef, i: number): ParamDef {
  if (i < def.params.length) return def.params[i];
  return def.params[def.params.length - 1];
}

type Resolved = Type | 'any' | 'anyArray' | 'anyMap';

function resolvePattern(p: TypePattern, previous: readonly Type[]): Resolved {
  if ('kind' in p) return p;
  if ('any' in p) return 'any';
  if ('anyArray' in p) return 'anyArray';
  if ('anyMap' in p) return 'anyMap';
  if ('sameAs' in p) return previous[p.sameAs] ?? 'any';
  const of = previous[p.elementOf];
  return of && (of.kind === 'Array' || of.kind === 'Map') ? of.of : 'any';
}

function matchesPattern(p: Resolved, t: Type): boolean {
  if (p === 'any') return true;
  if (p === 'anyArray') return t.kind === 'Array';
  if (p === 'anyMap') return t.kind === 'Map';
  return sameType(p, t);
}

function showExpected(ps: readonly Resolved[]): string {
  const names = [...new Set(ps.map((p) => (p === 'anyArray' ? 'Array<_>' : p === 'anyMap' ? 'Map<_>' : p === 'any' ? '_' : typeToString(p))))];
  if (names.length === 1) return names[0];
  if (names.length === 2) return `${names[0]} or ${names[1]}`;
  return `{${[...names].sort().join(', ')}}`;
}
