/**
 * What `terraform fmt` makes of a file, for the HCL that `rulesmith terraform export` writes
 * (terraform is not installed here). A separate reading of HashiCorp's formatter
 * (hclwrite's format: indentation, spaces between tokens, aligned `=`), written for these
 * tests and independent of export.ts:
 *
 * - a line's indentation is two spaces per bracket left open by the lines above it (a line
 *   that closes brackets is indented as the level it returns to);
 * - tokens are separated by one space, except: none before a comma or after one of `[` `(`,
 *   none around a dot, none before `]` `)`, none between `{` and `}` (`{}`), one after `{`
 *   and before `}` otherwise;
 * - a line `key = value` whose value closes all the brackets it opens is an attribute line;
 *   in each run of adjacent attribute lines the `=` signs line up one space after the
 *   widest key (in grapheme clusters, each token counted apart). Any other line (a blank
 *   one, a block's opening or closing, `rules = [`) ends the run.
 *
 * Tokens it knows: identifiers, numbers, quoted strings without interpolations, `=` `,` `.`
 * `:` and brackets, and a line that is one `#` comment (indented as the level it is at, its
 * text kept, ending a run of attribute lines); it throws on anything else, so a test never
 * passes on text it did not understand.
 */

type Kind = 'ident' | 'number' | 'string' | 'comment' | '=' | ',' | '.' | ':' | '{' | '}' | '[' | ']' | '(' | ')';
interface Token {
  readonly kind: Kind;
  readonly text: string;
}

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
const width = (t: Token): number => (t.kind === 'string' ? 2 + [...graphemes.segment(t.text.slice(1, -1))].length : [...graphemes.segment(t.text)].length);
const change = (t: Token): number => ('{[('.includes(t.kind) ? 1 : '}])'.includes(t.kind) ? -1 : 0);

function tokenize(line: string, at: number): Token[] {
  if (line.trimStart().startsWith('#')) return [{ kind: 'comment', text: line.trim() }];
  const out: Token[] = [];
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === ' ') {
      i++;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < line.length && line[j] !== '"') {
        if (line[j] === '\\') j++;
        else if ((line[j] === '$' || line[j] === '%') && line[j + 1] === '{') throw new Error(`line ${at}: an interpolation or template directive in a string`);
        else if ((line[j] === '$' || line[j] === '%') && line[j + 1] === line[j] && line[j + 2] === '{') j += 2;
        j++;
      }
      if (j >= line.length) throw new Error(`line ${at}: unterminated string`);
      out.push({ kind: 'string', text: line.slice(i, j + 1) });
      i = j + 1;
      continue;
    }
    const word = /^(?:[A-Za-z_][A-Za-z0-9_-]*|-?[0-9][0-9.eE+-]*)/.exec(line.slice(i))?.[0];
    if (word) {
      out.push({ kind: /^[A-Za-z_]/.test(word) ? 'ident' : 'number', text: word });
      i += word.length;
      continue;
    }
    if ('=,.:{}[]()'.includes(c)) {
      if (c === '=' && (line[i + 1] === '=' || line[i + 1] === '>')) throw new Error(`line ${at}: an operator`);
      out.push({ kind: c as Kind, text: c });
      i++;
      continue;
    }
    throw new Error(`line ${at}: unexpected ${JSON.stringify(c)}`);
  }
  return out;
}

/** hclwrite's spaceAfterToken, for the tokens above. */
function spaced(a: Token, b: Token): boolean {
  if (b.kind === ',') return false;
  if (a.kind === ',') return true;
  if (a.kind === '.' || b.kind === '.') return false;
  if (a.kind === '{' && b.kind === '}') return false;
  if (a.kind === '{' || b.kind === '}') return true;
  if (b.kind === ':') return false;
  if (b.kind === '[' && (a.kind === 'ident' || a.kind === 'number' || change(a) < 0)) return false;
  if (change(a) > 0 || change(b) < 0) return false;
  return true;
}

const join = (tokens: readonly Token[]): string => tokens.map((t, i) => (i > 0 && spaced(tokens[i - 1], t) ? ' ' : '') + t.text).join('');

/** The text as `terraform fmt` writes it. */
export function terraformFmt(text: string): string {
  const lines = text.split('\n').map((l, i) => {
    const tokens = tokenize(l, i + 1);
    const eq = tokens.findIndex((t, k) => k > 0 && t.kind === '=');
    const net = tokens.reduce((n, t) => n + change(t), 0);
    const assign = eq > 0 && tokens.slice(eq).reduce((n, t) => n + change(t), 0) === 0;
    return { tokens, net, lead: assign ? tokens.slice(0, eq) : tokens, assign: assign ? tokens.slice(eq) : undefined, indent: 0, pad: 1 };
  });
  // Indentation.
  const stack: number[] = [];
  for (const line of lines) {
    if (line.tokens.length === 0) continue;
    if (line.net > 0) {
      line.indent = 2 * stack.length;
      stack.push(line.net);
    } else if (line.net < 0) {
      let closed = -line.net;
      while (closed > 0 && stack.length > 0) {
        const top = stack[stack.length - 1];
        if (closed >= top) {
          closed -= top;
          stack.pop();
        } else {
          stack[stack.length - 1] -= closed;
          closed = 0;
        }
      }
      line.indent = 2 * stack.length;
    } else line.indent = 2 * stack.length;
  }
  // Aligned `=` in runs of attribute lines.
  const leadWidth = (l: (typeof lines)[number]) => l.indent + l.lead.reduce((w, t, i) => w + width(t) + (i > 0 && spaced(l.lead[i - 1], t) ? 1 : 0), 0);
  for (let i = 0; i < lines.length; ) {
    if (!lines[i].assign) {
      i++;
      continue;
    }
    let end = i;
    while (end < lines.length && lines[end].assign) end++;
    const run = lines.slice(i, end);
    const widest = Math.max(...run.map(leadWidth));
    for (const l of run) l.pad = widest - leadWidth(l) + 1;
    i = end;
  }
  return lines
    .map((l) => {
      if (l.tokens.length === 0) return '';
      const indent = ' '.repeat(l.indent);
      if (!l.assign) return indent + join(l.tokens);
      return `${indent}${join(l.lead)}${' '.repeat(l.pad)}${join(l.assign)}`;
    })
    .join('\n');
}
