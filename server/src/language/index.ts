/**
 * The Rules language core: the one entry point the language server, the CLI, the
 * rules service and the evaluation engine use. Pure: no I/O.
 */
import { checkAst, PARSE_LIMIT, tooLong, type CheckOptions } from './check';
import type { Expr } from './ast';
import { error, type Diagnostic } from './diagnostics';
import { compile, type CompiledFilter, type CompileOptions } from './evaluate';
import type { IrBool } from './ir';
import { prepareFields as prepareFieldValues } from './fieldValues';
import { withHint } from './hints';
import { NESTING_HINT, parseExpression, type ParseOptions } from './parse';
import { httpScheme } from './scheme/index';
import type { Scheme } from './scheme/types';
import type { Type } from './types';

export type { CheckOptions } from './check';
export type { Diagnostic } from './diagnostics';
export { formatExpression } from './format';

export interface CheckResult {
  readonly ast?: Expr;
  /** Present when there is no error. */
  readonly ir?: IrBool;
  readonly diagnostics: readonly Diagnostic[];
}

/** The type of a name for wording syntax errors: a field's type or a function's return. */
export function nameType(scheme: Scheme, name: string): Type | undefined {
  const f = scheme.fields.get(name);
  if (f) return f.type;
  const fn = scheme.functions.get(name);
  if (!fn) return undefined;
  try {
    return fn.returns([]);
  } catch {
    return undefined;
  }
}

/** Parses and checks one filter expression. Never throws. */
export function checkExpression(text: string, options: CheckOptions & Pick<ParseOptions, 'match'> = {}): CheckResult {
  if (text.length > PARSE_LIMIT && !options.allowManaged) return { diagnostics: [tooLong(text)] };
  const scheme = options.scheme ?? httpScheme;
  const parsed = parseExpression(text, { typeOf: (n) => nameType(scheme, n), match: options.match });
  if (!parsed.ast) return { diagnostics: parsed.diagnostics.map(withHint) };
  let checked: ReturnType<typeof checkAst>;
  try {
    checked = checkAst(parsed.ast, text, options);
  } catch (e) {
    // Only a pathologically deep expression exhausts the stack (thousands of `[0]` in a row): a finding, never a crash.
    if (!(e instanceof RangeError)) throw e;
    return { diagnostics: [error('nesting-too-deep', 0, text.length, 'the expression is nested too deeply to check', NESTING_HINT)] };
  }
  return { ast: parsed.ast, ir: checked.ir, diagnostics: sortDiagnostics(checked.diagnostics) };
}

/** Checks and compiles an expression for evaluation; `filter` is absent when it has errors. */
export function compileExpression(
  text: string,
  options: CheckOptions & CompileOptions = {},
): { filter?: CompiledFilter; ir?: IrBool; diagnostics: readonly Diagnostic[] } {
  const r = checkExpression(text, options);
  return { filter: r.ir && compile(r.ir, options), ...(r.ir ? { ir: r.ir } : {}), diagnostics: r.diagnostics };
}

/** The names of the fields a checked expression reads. */
export function irFieldNames(ir: IrBool): Set<string> {
  return irNames(ir, 'field');
}

/** The names of the lists a checked expression looks values up in (`$office`, `$cf.open_proxies`). */
export function irListNames(ir: IrBool): Set<string> {
  return irNames(ir, 'inList');
}

function irNames(ir: IrBool, kind: 'field' | 'inList'): Set<string> {
  const names = new Set<string>();
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) for (const y of x) walk(y);
    else if (x !== null && typeof x === 'object') {
      const node = x as { readonly k?: unknown; readonly name?: unknown };
      if (node.k === kind && typeof node.name === 'string') names.add(node.name);
      for (const v of Object.values(node)) if (v !== null && typeof v === 'object') walk(v);
    }
  };
  walk(ir);
  return names;
}

function sortDiagnostics(ds: readonly Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return ds
    .map(withHint)
    .sort((a, b) => a.range.start - b.range.start || a.range.end - b.range.end)
    .filter((d) => {
      const key = `${d.range.start}:${d.range.end}:${d.code}:${d.message}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

/** Converts field values written as JSON (strings, numbers, IP text, objects, arrays) into runtime values. */
export function prepareFields(input: Record<string, unknown>, scheme: Scheme = httpScheme) {
  return prepareFieldValues(input, scheme);
}
