/**
 * A lexical scan for text that may not parse (the user is typing): where quoted, regex
 * and raw strings start and end, so that tabs, brackets or an unterminated string can be
 * found outside them. Follows the lexer: `\` escapes in quoted strings; after `matches`
 * an unescaped `[` opens a class in which `"` does not end the string; `r#"…"#` raw strings.
 */

const NAME_CHAR = /[A-Za-z0-9_.]/;

export interface StringSpan {
  /** Just past the closing delimiter, or text.length when unterminated. */
  readonly end: number;
  readonly closed: boolean;
}

/** If a string starts at `i`, its extent; otherwise undefined. `regex`: lex it as a regex literal. */
export function stringAt(text: string, i: number, regex = false): StringSpan | undefined {
  const c = text[i];
  if (c === 'r' && !NAME_CHAR.test(text[i - 1] ?? ' ')) {
    const m = /^r(#*)"/.exec(text.slice(i, i + 260));
    if (!m) return undefined;
    const close = text.indexOf(`"${m[1]}`, i + m[0].length);
    return close < 0 ? { end: text.length, closed: false } : { end: close + 1 + m[1].length, closed: true };
  }
  if (c !== '"') return undefined;
  let inClass = false;
  for (let j = i + 1; j < text.length; j++) {
    const d = text[j];
    if (d === '\\') j++;
    else if (regex && !inClass && d === '[') inClass = true;
    else if (inClass && d === ']') inClass = false;
    else if (d === '"' && !inClass) return { end: j + 1, closed: true };
  }
  return { end: text.length, closed: false };
}

/** Calls `visit` for every character outside strings, with its offset. */
export function forEachOutsideStrings(text: string, visit: (c: string, i: number) => void): void {
  let regexNext = false;
  for (let i = 0; i < text.length; ) {
    const s = stringAt(text, i, regexNext);
    if (s) {
      i = s.end;
      regexNext = false;
      continue;
    }
    const c = text[i];
    visit(c, i);
    if (text.startsWith('matches', i) && !NAME_CHAR.test(text[i - 1] ?? ' ')) {
      regexNext = true;
      i += 7;
      continue;
    }
    if (c === '~') regexNext = true;
    else if (c !== ' ' && c !== '\n' && c !== '\r' && c !== '\t') regexNext = false;
    i++;
  }
}

/** Where the string that runs to the end of the text starts, if one does. */
export function unterminatedStringStart(text: string): number | undefined {
  let found: number | undefined;
  let regexNext = false;
  for (let i = 0; i < text.length && found === undefined; ) {
    const s = stringAt(text, i, regexNext);
    if (s) {
      if (!s.closed) found = i;
      i = s.end;
      regexNext = false;
      continue;
    }
    if (text.startsWith('matches', i) && !NAME_CHAR.test(text[i - 1] ?? ' ')) {
      regexNext = true;
      i += 7;
      continue;
    }
    const c = text[i];
    if (c === '~') regexNext = true;
    else if (c !== ' ' && c !== '\n' && c !== '\r') regexNext = false;
    i++;
  }
  return found;
}
