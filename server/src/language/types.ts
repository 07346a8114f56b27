/**
 * The value types of the Rules language (wirefilter's names): Bytes, Int, Bool, Ip,
 * Array<T> and Map<T> (map keys are always byte strings).
 */
export type Type =
  | { readonly kind: 'Bytes' }
  | { readonly kind: 'Int' }
  | { readonly kind: 'Bool' }
  | { readonly kind: 'Ip' }
  | { readonly kind: 'Array'; readonly of: Type }
  | { readonly kind: 'Map'; readonly of: Type };

export const BYTES: Type = { kind: 'Bytes' };
export const INT: Type = { kind: 'Int' };
export const BOOL: Type = { kind: 'Bool' };
export const IP: Type = { kind: 'Ip' };

export function arrayOf(of: Type): Type {
  return { kind: 'Array', of };
}

export function mapOf(of: Type): Type {
  return { kind: 'Map', of };
}

/** The engine's display form, used verbatim in messages: `Map<Array<Bytes>>`. */
export function typeToString(t: Type): string {
  switch (t.kind) {
    case 'Array':
      return `Array<${typeToString(t.of)}>`;
    case 'Map':
      return `Map<${typeToString(t.of)}>`;
    default:
      return t.kind;
  }
}

export function sameType(a: Type, b: Type): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'Array' || a.kind === 'Map') return sameType(a.of, (b as typeof a).of);
  return true;
}

/** Parses the display form back (`Array<Bytes>`); used to keep the scheme compact. */
export function parseType(text: string): Type {
  const s = text.replace(/\s+/g, '');
  switch (s) {
    case 'Bytes':
      return BYTES;
    case 'Int':
      return INT;
    case 'Bool':
      return BOOL;
    case 'Ip':
      return IP;
  }
  const m = /^(Array|Map)<(.+)>$/.exec(s);
  if (!m) throw new Error(`not a type: ${text}`);
  const of = parseType(m[2]);
  return m[1] === 'Array' ? arrayOf(of) : mapOf(of);
}
