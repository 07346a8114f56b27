/**
 * The request target in pieces, and `name=value&…` pairs: how both the Rules fields
 * (fields.ts) and ModSecurity's variables (crsFields.ts) read a URL.
 */

export interface Target {
  readonly scheme?: string;
  readonly authority?: string;
  readonly path: string;
  readonly query?: string;
}

/** Splits a request target (absolute URL or anything else, taken as path?query); drops a #fragment. */
export function splitTarget(url: string): Target {
  const hash = url.indexOf('#');
  const u = hash < 0 ? url : url.slice(0, hash);
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?]*)(.*)$/s.exec(u);
  const rest = m ? m[3] : u;
  const q = rest.indexOf('?');
  const path = q < 0 ? rest : rest.slice(0, q);
  return {
    scheme: m ? m[1].toLowerCase() : undefined,
    authority: m ? m[2] : undefined,
    path: m && path === '' ? '/' : path,
    query: q < 0 ? undefined : rest.slice(q + 1),
  };
}

/** `a=1&b&&c=2` -> [a,1] [b,""] [c,2] (binary strings in, binary strings out). */
export function splitPairs(s: string): [string, string][] {
  const out: [string, string][] = [];
  if (s === '') return out;
  for (const piece of s.split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    out.push(eq < 0 ? [piece, ''] : [piece.slice(0, eq), piece.slice(eq + 1)]);
  }
  return out;
}
