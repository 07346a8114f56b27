/**
 * Test helper: the shape of a syntax tree without source positions, so that trees parsed
 * from differently laid out texts can be compared. With `dropTokenTexts` the operator
 * spellings (`and`/`&&`, `eq`/`==`, `not`/`!`) are dropped too; literal texts are kept.
 */
export function astShape(node: unknown, dropTokenTexts = false): unknown {
  return strip(node, dropTokenTexts, false);
}

function strip(node: unknown, dropTokenTexts: boolean, isToken: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => strip(n, dropTokenTexts, isToken));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'span' || key === 'nameSpan') continue;
    if (isToken && dropTokenTexts && key === 'text') continue;
    // Operator tokens: a logical's `ops`, a not's `token`, a comparison's `op`.
    const token = key === 'ops' || key === 'token' || (key === 'op' && typeof value === 'object');
    out[key] = strip(value, dropTokenTexts, token);
  }
  return out;
}
