/**
 * Warnings for literals that can never match, because Cloudflare normalises the value
 * they are compared with: methods and countries are upper case, header names (as map
 * keys) and extensions lower case, paths start with `/`.
 */
import type * as A from './ast';
import { binaryToUtf8 } from './bytes';
import { warning, type Diagnostic } from './diagnostics';
import type { IrTest } from './ir';
import type { Scheme } from './scheme/types';

type Push = (d: Diagnostic) => void;

const LOWERCASE_KEY_MAPS = new Set(['http.request.headers', 'http.response.headers', 'raw.http.response.headers']);
const PATH_FIELDS = new Set(['http.request.uri.path', 'raw.http.request.uri.path']);
const EXTENSION_FIELDS = new Set(['http.request.uri.path.extension', 'raw.http.request.uri.path.extension']);

/** The literals of a comparison's right-hand side with their decoded values, in order. */
function literalsOf(e: A.ComparisonExpr, test: IrTest): [A.Literal, string][] {
  const rhs = e.rhs;
  if (!rhs) return [];
  if (rhs.kind === 'literal' && 'value' in test && typeof test.value === 'string') return [[rhs, test.value]];
  if (rhs.kind === 'literal' && test.k === 'wildcard') return [[rhs, test.pattern]];
  if (rhs.kind === 'set' && test.k === 'inBytes') return rhs.items.map((l, i) => [l, test.values[i]] as [A.Literal, string]);
  return [];
}

const quote = (s: string) => JSON.stringify(s);

/** Lower-cases (or upper-cases) ASCII letters only, as the engine's `lower` / `upper` do. */
function asciiCase(s: string, to: 'lower' | 'upper'): string {
  return to === 'lower' ? s.replace(/[A-Z]/g, (c) => c.toLowerCase()) : s.replace(/[a-z]/g, (c) => c.toUpperCase());
}

/** The literal rewritten in the case `to`, keeping its form (quoted, raw); undefined when escapes make that unsafe. */
function recased(lit: A.Literal, value: string, to: 'lower' | 'upper'): string | undefined {
  if (lit.form === 'raw' || (lit.form === 'quoted' && !lit.text.includes('\\'))) return asciiCase(lit.text, to).replace(/^R/, 'r');
  const fixed = asciiCase(value, to);
  return /^[\x20-\x7e]*$/.test(fixed) && !/["\\]/.test(fixed) ? quote(fixed) : undefined;
}

/**
 * `lower(http.host) eq "Example.COM"` never matches: the left side has no upper-case
 * letter. Likewise `upper(…)` with a lower-case letter. `ne` is then always true. Regexes and
 * (case-insensitive) wildcards are left alone.
 */
function lintCaseFolded(e: A.ComparisonExpr, test: IrTest, push: Push): void {
  if (e.lhs.kind !== 'call' || (e.lhs.name !== 'lower' && e.lhs.name !== 'upper')) return;
  if (test.k === 'matches' || (test.k === 'wildcard' && !test.strict)) return;
  const to = e.lhs.name;
  const wrong = to === 'lower' ? /[A-Z]/ : /[a-z]/;
  // Ordering (`lt`, …) still means something with upper-case letters.
  if (!['eq', 'ne', 'contains', 'wildcard', 'inBytes'].includes(test.k)) return;
  const literals = literalsOf(e, test);
  for (const [lit, bytes] of literals) {
    if (!wrong.test(bytes)) continue;
    const value = binaryToUtf8(bytes) ?? bytes;
    const yields = to === 'lower' ? 'lower case' : 'upper case';
    const message =
      test.k === 'ne'
        ? `${quote(value)} is never equal to \`${to}(…)\`, which is ${yields}: this condition is always true`
        : `${quote(value)} can never match: \`${to}(…)\` is ${yields}`;
    const replacement = recased(lit, bytes, to);
    const hint = replacement ? `Write ${replacement}.` : `Write the literal in ${yields}.`;
    push(warning('never-matches', lit.span.start, lit.span.end, message, hint, replacement ? { replacement } : undefined));
  }
}

export function lintComparison(scheme: Scheme, e: A.ComparisonExpr, test: IrTest, _text: string, push: Push): void {
  lintCaseFolded(e, test, push);
  if (e.lhs.kind !== 'field') return;
  const name = e.lhs.name;
  const def = scheme.fields.get(name);
  // Equality, sets and wildcards only: `contains`, regexes and ordering (`lt "a"`) may match
  // whatever the literal; a case-insensitive wildcard matches any case; `ne` is always true.
  if (!['eq', 'ne', 'inBytes', 'wildcard'].includes(test.k)) return;
  const caseless = test.k === 'wildcard' && !test.strict;
  const never = (why: string) => (test.k === 'ne' ? `is never equal to it, as ${why}: this condition is always true` : `can never match: ${why}`);
  for (const [lit, bytes] of literalsOf(e, test)) {
    const value = binaryToUtf8(bytes);
    if (value === undefined) continue;
    const at = lit.span;
    if (PATH_FIELDS.has(name) && value !== '' && !value.startsWith('/') && !(test.k === 'wildcard' && value.startsWith('*'))) {
      push(warning('path-without-slash', at.start, at.end, `${quote(value)} ${never(`\`${name}\` always starts with "/"`)}`, `Write ${quote('/' + value)}.`, { replacement: quote('/' + value) }));
      continue;
    }
    if (EXTENSION_FIELDS.has(name) && (value.startsWith('.') || (!caseless && value !== value.toLowerCase()))) {
      const fixed = value.replace(/^\./, '').toLowerCase();
      push(warning('never-matches', at.start, at.end, `${quote(value)} ${never(`\`${name}\` is lower case and has no leading dot`)}`, `Write ${quote(fixed)}.`, { replacement: quote(fixed) }));
      continue;
    }
    const known = def?.values;
    if (!known || known.includes(value) || test.k === 'wildcard') continue;
    const fixed = known.find((k) => k.toLowerCase() === value.toLowerCase());
    if (!fixed) continue;
    if (name === 'http.request.method') {
      push(warning('method-not-uppercase', at.start, at.end, `${quote(value)} ${never('methods are upper case')}`, `Write ${quote(fixed)}.`, { replacement: quote(fixed) }));
    } else {
      push(warning('never-matches', at.start, at.end, `${quote(value)} ${never(`\`${name}\` values are written ${quote(fixed)}`)}`, `Write ${quote(fixed)}.`, { replacement: quote(fixed) }));
    }
  }
}

/** `http.request.headers["Content-Type"]` never matches: Cloudflare lower-cases header names. */
export function lintMapKey(v: A.IndexAccess, keyBytes: string, _text: string, push: Push): void {
  if (v.target.kind !== 'field' || !LOWERCASE_KEY_MAPS.has(v.target.name) || v.key.kind !== 'key') return;
  const key = binaryToUtf8(keyBytes);
  if (key === undefined || key === key.toLowerCase()) return;
  const at = v.key.literal.span;
  push(warning('header-key-not-lowercase', at.start, at.end, `${quote(key)} can never match: header names in \`${v.target.name}\` are lower case`, `Write ${quote(key.toLowerCase())}.`, { replacement: quote(key.toLowerCase()) }));
}
