/**
 * Signature help inside the parentheses of a function call (or of `any(…)` / `all(…)`).
 *
 * The innermost open call before the cursor is found with the same scanner completion
 * uses, so commas inside strings, sets, indexes and nested calls do not count; the
 * active parameter is the number of the call's own commas before the cursor (repeating
 * parameters such as `lookup_json_string`'s keys stay active to the end).
 */
import type { ParameterInformation, SignatureHelp, SignatureInformation } from 'vscode-languageserver';
import type { FunctionDef, ParamDef, TypePattern } from '../language/scheme/types';
import { typeToString } from '../language/types';
import { analyze, innermostCall, tokenize, type ExpressionContext } from './context';
import { QUANTIFIER_DOCS, functionMarkdown } from './hover';

function patternText(p: TypePattern, params: readonly ParamDef[], depth = 0): string {
  if ('any' in p || 'elementOf' in p) return '_';
  if ('anyArray' in p) return 'Array<_>';
  if ('anyMap' in p) return 'Map<_>';
  if ('sameAs' in p) {
    const other = params[p.sameAs];
    return other && depth < 2 ? other.types.map((t) => patternText(t, params, depth + 1)).join(' | ') : '_';
  }
  return typeToString(p);
}

/** `name: Bytes`, `flags?: Bytes`, `...keys: Bytes | Int`. */
export function paramLabel(p: ParamDef, params: readonly ParamDef[]): string {
  const types = p.types.map((t) => patternText(t, params)).join(' | ');
  return `${p.variadic ? '...' : ''}${p.name}${p.optional ? '?' : ''}: ${types}`;
}

const KIND_TEXT: Readonly<Record<ParamDef['kind'], string>> = {
  field: 'a field or expression, not a literal',
  literal: 'a literal value',
  either: 'a literal or a field',
};

/** `source` (`Bytes`): a field or expression, not a literal. */
function paramDoc(p: ParamDef, params: readonly ParamDef[]): string {
  const types = p.types.map((t) => patternText(t, params)).join(' | ');
  const extra = [p.optional ? ', optional' : '', p.variadic ? ', repeats' : ''].join('');
  return `\`${p.name}\` (\`${types}\`${extra}): ${KIND_TEXT[p.kind]}.`;
}

/** The function's return type as the scheme's display signature gives it. */
function returnText(fn: FunctionDef): string {
  const at = fn.signature.lastIndexOf('->');
  return at >= 0 ? fn.signature.slice(at + 2).trim() : '_';
}

/** A signature label built from the parameters, with each parameter's label range. */
export function functionSignature(fn: FunctionDef, ctx: ExpressionContext): SignatureInformation {
  let label = `${fn.name}(`;
  const parameters: ParameterInformation[] = [];
  fn.params.forEach((p, i) => {
    if (i > 0) label += ', ';
    const text = paramLabel(p, fn.params);
    parameters.push({ label: [label.length, label.length + text.length], documentation: { kind: 'markdown', value: paramDoc(p, fn.params) } });
    label += text;
  });
  label += `) -> ${returnText(fn)}`;
  return { label, documentation: { kind: 'markdown', value: functionMarkdown(fn, ctx, false) }, parameters };
}

function quantifierSignature(name: 'any' | 'all'): SignatureInformation {
  const q = QUANTIFIER_DOCS[name];
  const param = 'condition: Array<Bool>';
  const start = q.signature.indexOf(param);
  return {
    label: q.signature,
    documentation: { kind: 'markdown', value: q.lines.join('\n\n') },
    parameters: [
      {
        label: [start, start + param.length],
        documentation: { kind: 'markdown', value: 'A comparison over `[*]` (an `Array<Bool>`), or several in parentheses.' },
      },
    ],
  };
}

/**
 * Signature help for the expression `text` at UTF-16 `offset`: the innermost function
 * call (or quantifier) whose parentheses contain the cursor; undefined outside calls
 * and for unknown functions. `activeParameter` is past the last parameter when the call
 * already has too many arguments (no parameter is highlighted then).
 */
export function signatureHelp(text: string, offset: number, ctx: ExpressionContext): SignatureHelp | undefined {
  offset = Math.max(0, Math.min(offset, text.length));
  const { frames } = analyze(tokenize(text.slice(0, offset)), ctx.scheme);
  const call = innermostCall(frames);
  if (!call) return undefined;
  if (call.kind === 'quantifier') {
    const sig = { ...quantifierSignature(call.name), activeParameter: 0 };
    return { signatures: [sig], activeSignature: 0, activeParameter: 0 };
  }
  const fn = call.fn;
  if (!fn) return undefined;
  let active = call.argIndex;
  const lastParam = fn.params[fn.params.length - 1];
  if (active >= fn.params.length && lastParam?.variadic) active = fn.params.length - 1;
  const sig = { ...functionSignature(fn, ctx), activeParameter: active };
  return { signatures: [sig], activeSignature: 0, activeParameter: active };
}
