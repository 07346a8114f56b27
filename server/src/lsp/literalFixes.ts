/**
 * Quick fixes for literals the engine refuses, each the likely meaning:
 *   - `"C:\x"` (invalid-escape): the backslash was meant literally -> `"C:\\x"`, or a raw
 *     string `r"C:\x"` (offered only when no real escape would change meaning);
 *   - `"abc` (unterminated-string) -> the closing quote;
 *   - `ip.src eq "192.0.2.1"` (invalid-ip, quoted) -> without the quotes; `10.0.0.1/8` in a
 *     set (host bits set) -> the network, `10.0.0.0/8`;
 *   - `headers[x-id]` (invalid-index) -> `headers["x-id"]`;
 *   - `$Office` (invalid-list-name) -> `$office`.
 * Pure: text and syntax tree in, expression edits (offsets into the expression) out.
 */
import * as A from '../language/ast';
import type { Diagnostic } from '../language/diagnostics';
import { parseIpAddr, parseIpSetItem } from '../language/ip';

export interface LiteralFix {
  readonly title: string;
  readonly edits: readonly { readonly start: number; readonly end: number; readonly text: string }[];
  readonly preferred?: boolean;
}

function literalAt(ast: A.Expr | undefined, offset: number): A.Literal | undefined {
  if (!ast) return undefined;
  return A.nodesOf(ast).find((n): n is A.Literal => n.kind === 'literal' && n.span.start <= offset && offset < n.span.end);
}

/** The offset of the backslash that starts the escape at `offset` in a quoted literal. */
function escapeStart(lit: A.Literal, offset: number): number | undefined {
  let found: number | undefined;
  for (let i = 1; i < lit.text.length - 1; i++) {
    if (lit.text[i] !== '\\') continue;
    if (lit.span.start + i >= offset) break;
    found = lit.span.start + i;
    i++;
  }
  return found;
}

/**
 * The raw string with the same characters as `content` (a quoted literal's inside) where
 * only `\\` and `\"` are escapes and every other backslash is literal; undefined when a
 * real byte escape (`\x41`, `\101`) is present, whose meaning a raw string cannot keep.
 */
export function rawStringFor(content: string): string | undefined {
  let out = '';
  for (let i = 0; i < content.length; i++) {
    const c = content[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const n = content[i + 1];
    if (n === '\\' || n === '"') {
      out += n;
      i++;
    } else if ((n === 'x' && /^[0-9A-Fa-f]{2}$/.test(content.slice(i + 2, i + 4))) || /^[0-7]{3}$/.test(content.slice(i + 1, i + 4))) {
      return undefined;
    } else out += '\\';
  }
  let hashes = '';
  while (out.includes(`"${hashes}`)) hashes += '#';
  return `r${hashes}"${out}"${hashes}`;
}

export function literalFixes(text: string, ast: A.Expr | undefined, d: Diagnostic): LiteralFix[] {
  switch (d.code) {
    case 'unterminated-string': {
      const end = text.trimEnd().length;
      // An odd run of backslashes at the end would escape the quote added: one more makes it a backslash of the string.
      // (Not in a raw string, where a backslash is itself; the diagnostic starts at the string.)
      const trailing = text[d.range.start] === '"' ? /\\*$/.exec(text.slice(0, end))![0].length : 0;
      return [{ title: 'Add the closing quote', edits: [{ start: end, end, text: trailing % 2 === 1 ? '\\"' : '"' }], preferred: true }];
    }
    case 'invalid-escape': {
      const lit = literalAt(ast, d.range.start);
      if (!lit || lit.form !== 'quoted') return [];
      const at = escapeStart(lit, d.range.start);
      if (at === undefined) return [];
      const next = text[at + 1] ?? '';
      const out: LiteralFix[] = [{ title: `Escape the backslash: \`\\\\${next}\``, edits: [{ start: at, end: at, text: '\\' }], preferred: true }];
      const raw = rawStringFor(lit.text.slice(1, -1));
      if (raw) out.push({ title: `Use a raw string: \`${raw}\``, edits: [{ start: lit.span.start, end: lit.span.end, text: raw }] });
      return out;
    }
    case 'invalid-ip': {
      const lit = literalAt(ast, d.range.start);
      if (!lit) return [];
      const replacement = typeof d.data?.replacement === 'string' ? d.data.replacement : undefined;
      if (replacement) return [{ title: `Change to \`${replacement}\``, edits: [{ start: lit.span.start, end: lit.span.end, text: replacement }], preferred: true }];
      if (lit.form !== 'quoted') return [];
      const inner = lit.text.slice(1, -1);
      const parses = parseIpAddr(inner).ok || parseIpSetItem(inner).ok;
      return parses ? [{ title: `Remove the quotes: \`${inner}\``, edits: [{ start: lit.span.start, end: lit.span.end, text: inner }], preferred: true }] : [];
    }
    case 'invalid-index': {
      // `[x-id]`: the grammar stops at the key; quote what runs to the closing bracket.
      const close = text.indexOf(']', d.range.start);
      if (close < 0) return [];
      const key = text.slice(d.range.start, close).trim();
      if (!/^[A-Za-z0-9_.:-]+$/.test(key) || /^\d+$/.test(key)) return [];
      const quoted = `"${key}"`;
      return [{ title: `Quote the key: \`[${quoted}]\``, edits: [{ start: d.range.start, end: close, text: quoted }], preferred: true }];
    }
    case 'invalid-list-name': {
      const dollar = text.lastIndexOf('$', d.range.start);
      if (dollar < 0) return [];
      const m = /^\$([A-Za-z0-9_.]+)/.exec(text.slice(dollar));
      if (!m || m[1] === m[1].toLowerCase()) return [];
      const name = m[1].toLowerCase();
      return [{ title: `Change to \`$${name}\``, edits: [{ start: dollar + 1, end: dollar + 1 + m[1].length, text: name }], preferred: true }];
    }
    default:
      return [];
  }
}
