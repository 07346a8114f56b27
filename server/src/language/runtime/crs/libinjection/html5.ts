// A simplified HTML5 tokenizer for @detectXSS (CRS 941100/941101), written clean-room from
// the behaviour pinned down by libinjection's test-html5-* vectors
// (test/fixtures/libinjection/tests, BSD 3-clause data: see COPYING in this folder) and
// from the HTML5 tokenization rules. It is deliberately forgiving: it never fails, it only
// splits the input into the pieces a browser would see (text, tag names, attribute names
// and values, comments, doctypes) so that the XSS check can look at them.
//
// Input is a "binary string": one char per byte (code units 0..255). Pure: no I/O.

export type Html5TokenType =
  | 'DATA_TEXT'
  | 'TAG_NAME_OPEN'
  | 'TAG_NAME_CLOSE'
  | 'TAG_NAME_SELFCLOSE'
  | 'TAG_CLOSE'
  | 'ATTR_NAME'
  | 'ATTR_VALUE'
  | 'TAG_COMMENT'
  | 'DOCTYPE';

export interface Html5Token {
  type: Html5TokenType;
  value: string;
}

/**
 * Where tokenizing starts: in text (the data state), among a tag's attributes (before an
 * attribute name), or as if the input were injected inside an attribute value that is
 * unquoted, single-, double- or back-tick-quoted.
 */
export type Html5StartState =
  | 'data'
  | 'attrName'
  | 'valueNoQuote'
  | 'valueSingleQuote'
  | 'valueDoubleQuote'
  | 'valueBackQuote';

export const HTML5_START_STATES: readonly Html5StartState[] = [
  'data',
  'attrName',
  'valueNoQuote',
  'valueSingleQuote',
  'valueDoubleQuote',
  'valueBackQuote',
];

type State =
  | 'data'
  | 'tagOpen'
  | 'endTagOpen'
  | 'tagName'
  | 'beforeAttrName'
  | 'attrName'
  | 'afterAttrName'
  | 'beforeAttrValue'
  | 'attrValueQuoted'
  | 'attrValueUnquoted'
  | 'afterAttrValueQuoted'
  | 'selfClosing'
  | 'markupDeclaration'
  | 'comment'
  | 'bogusComment'
  | 'percentComment'
  | 'doctype'
  | 'cdata'
  | 'eof';

/** HTML whitespace as the tokenizer sees it (space, tab, LF, VT, FF, CR). */
function isSpaceCode(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

function isAsciiLetter(ch: string): boolean {
  const c = ch.charCodeAt(0);
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/** Tokenizes `input` starting in `start`; see the test-html5-* vectors for the exact output. */
export function html5Tokens(input: string, start: Html5StartState = 'data'): Html5Token[] {
  const out: Html5Token[] = [];
  scanHtml5(input, start, (type, from, to) => {
    out.push({ type, value: input.slice(from, to) });
    return false;
  });
  return out;
}

/**
 * Called with each token's type and where its value is in the input (every token's value is
 * a piece of it); returning true stops the scan.
 */
export type Html5Visitor = (type: Html5TokenType, from: number, to: number) => boolean;

const SLASH = 0x2f;
const GT = 0x3e;
const EQ = 0x3d;

/**
 * The tokenizer itself: hands each token to `visit` as a range of the input instead of
 * building token objects and strings, so that @detectXSS on a long value of many tags
 * (`<a <a <a …`, six start states) allocates nothing per token.
 */
export function scanHtml5(input: string, start: Html5StartState, visit: Html5Visitor): void {
  const s = input;
  const n = s.length;
  let stopped = false;
  const emit = (type: Html5TokenType, from: number, to: number): void => {
    if (visit(type, from, to)) stopped = true;
  };
  let i = 0;
  let quote = '';
  let closing = false; // the tag being read started with "</"
  let state: State;
  switch (start) {
    case 'data':
      state = 'data';
      break;
    case 'attrName':
      state = 'beforeAttrName';
      break;
    case 'valueNoQuote':
      state = 'attrValueUnquoted';
      break;
    case 'valueSingleQuote':
      state = 'attrValueQuoted';
      quote = "'";
      break;
    case 'valueDoubleQuote':
      state = 'attrValueQuoted';
      quote = '"';
      break;
    case 'valueBackQuote':
      state = 'attrValueQuoted';
      quote = '`';
      break;
  }

  // '>' ends the tag: emit it and go back to text.
  const closeTag = (): State => {
    emit('TAG_NAME_CLOSE', i, i + 1);
    i++;
    return 'data';
  };
  const skipSpace = (): void => {
    while (i < n && isSpaceCode(s.charCodeAt(i))) i++;
  };

  while (state !== 'eof' && !stopped) {
    switch (state) {
      case 'data': {
        if (i >= n) {
          state = 'eof';
          break;
        }
        const lt = s.indexOf('<', i);
        if (lt < 0) {
          emit('DATA_TEXT', i, n);
          i = n;
          state = 'eof';
        } else {
          if (lt > i) emit('DATA_TEXT', i, lt);
          i = lt + 1;
          state = 'tagOpen';
        }
        break;
      }
      case 'tagOpen': {
        if (i >= n) {
          emit('DATA_TEXT', i - 1, i);
          state = 'eof';
          break;
        }
        const ch = s[i];
        if (ch === '!') {
          i++;
          state = 'markupDeclaration';
        } else if (ch === '/') {
          i++;
          state = 'endTagOpen';
        } else if (ch === '?') {
          i++;
          state = 'bogusComment';
        } else if (ch === '%') {
          // <% ... %>: a comment to IE and old Safari
          i++;
          state = 'percentComment';
        } else if (isAsciiLetter(ch) || ch === '\0') {
          // a NUL starts a name too: "<\0script>" is read as a tag, to be safe
          closing = false;
          state = 'tagName';
        } else {
          // not a tag: the '<' is text, and so is what follows
          emit('DATA_TEXT', i - 1, i);
          state = 'data';
        }
        break;
      }
      case 'endTagOpen': {
        if (i >= n) {
          emit('DATA_TEXT', i - 2, i);
          state = 'eof';
          break;
        }
        const ch = s[i];
        if (ch === '>') {
          i++; // "</>" is dropped
          state = 'data';
        } else if (isAsciiLetter(ch) || ch === '\0') {
          closing = true;
          state = 'tagName';
        } else {
          state = 'bogusComment';
        }
        break;
      }
      case 'tagName': {
        let j = i;
        for (let c = s.charCodeAt(j); j < n && !isSpaceCode(c) && c !== SLASH && c !== GT; c = s.charCodeAt(++j));
        const from = i;
        i = j;
        if (closing && i < n && s[i] === '>') {
          // a plain end tag "</name>"
          emit('TAG_CLOSE', from, i);
          i++;
          state = 'data';
          break;
        }
        emit('TAG_NAME_OPEN', from, i);
        if (i >= n) state = 'eof';
        else if (s[i] === '/') {
          i++;
          state = 'selfClosing';
        } else if (s[i] === '>') state = closeTag();
        else state = 'beforeAttrName';
        break;
      }
      case 'beforeAttrName': {
        skipSpace();
        if (i >= n) state = 'eof';
        else if (s[i] === '/') {
          i++;
          state = 'selfClosing';
        } else if (s[i] === '>') state = closeTag();
        else state = 'attrName';
        break;
      }
      case 'attrName': {
        // the first character always belongs to the name, even '=' ("<a =x=1>")
        let j = i + 1;
        for (let c = s.charCodeAt(j); j < n && !isSpaceCode(c) && c !== SLASH && c !== GT && c !== EQ; c = s.charCodeAt(++j));
        emit('ATTR_NAME', i, j);
        i = j;
        state = 'afterAttrName';
        break;
      }
      case 'afterAttrName': {
        skipSpace();
        if (i >= n) state = 'eof';
        else if (s[i] === '/') {
          i++;
          state = 'selfClosing';
        } else if (s[i] === '=') {
          i++;
          state = 'beforeAttrValue';
        } else if (s[i] === '>') state = closeTag();
        else state = 'attrName';
        break;
      }
      case 'beforeAttrValue': {
        skipSpace();
        if (i >= n) {
          state = 'eof';
          break;
        }
        const ch = s[i];
        if (ch === '"' || ch === "'" || ch === '`') {
          quote = ch;
          i++;
          state = 'attrValueQuoted';
        } else if (ch === '>') {
          emit('ATTR_VALUE', i, i);
          state = closeTag();
        } else state = 'attrValueUnquoted';
        break;
      }
      case 'attrValueQuoted': {
        const end = s.indexOf(quote, i);
        if (end < 0) {
          emit('ATTR_VALUE', i, n);
          i = n;
          state = 'eof';
        } else {
          emit('ATTR_VALUE', i, end);
          i = end + 1;
          state = 'afterAttrValueQuoted';
        }
        break;
      }
      case 'afterAttrValueQuoted': {
        if (i >= n) state = 'eof';
        else if (isSpaceCode(s.charCodeAt(i))) {
          i++;
          state = 'beforeAttrName';
        } else if (s[i] === '/') {
          i++;
          state = 'selfClosing';
        } else if (s[i] === '>') state = closeTag();
        else state = 'beforeAttrName'; // '<a x="1"y=2>': y is a new attribute
        break;
      }
      case 'attrValueUnquoted': {
        let j = i;
        for (let c = s.charCodeAt(j); j < n && !isSpaceCode(c) && c !== GT; c = s.charCodeAt(++j));
        emit('ATTR_VALUE', i, j);
        i = j;
        if (i >= n) state = 'eof';
        else if (s[i] === '>') state = closeTag();
        else state = 'beforeAttrName';
        break;
      }
      case 'selfClosing': {
        if (i >= n) state = 'eof';
        else if (s[i] === '>') {
          emit('TAG_NAME_SELFCLOSE', i - 1, i + 1);
          i++;
          state = 'data';
        } else state = 'beforeAttrName'; // "<a /x>": the '/' is ignored
        break;
      }
      case 'markupDeclaration': {
        if (s.startsWith('--', i)) {
          i += 2;
          state = 'comment';
        } else if (s.slice(i, i + 7).toLowerCase() === 'doctype') {
          state = 'doctype';
        } else if (s.startsWith('[CDATA[', i)) {
          i += 7;
          state = 'cdata';
        } else state = 'bogusComment';
        break;
      }
      case 'comment': {
        // "<!-->" and "<!--->" are empty comments that end at once
        if (s[i] === '>' || s.startsWith('->', i)) {
          emit('TAG_COMMENT', i, i);
          i += s[i] === '>' ? 1 : 2;
          state = 'data';
          break;
        }
        let k = i;
        let endLen = 0;
        for (; k < n; k++) {
          if (s[k] !== '-' || s[k + 1] !== '-') continue;
          if (s[k + 2] === '>') {
            endLen = 3;
            break;
          }
          if (s[k + 2] === '!' && s[k + 3] === '>') {
            endLen = 4;
            break;
          }
        }
        emit('TAG_COMMENT', i, k);
        if (endLen === 0) state = 'eof';
        else {
          i = k + endLen;
          state = 'data';
        }
        break;
      }
      case 'bogusComment':
        state = until('>', 'TAG_COMMENT');
        break;
      case 'percentComment':
        state = until('%>', 'TAG_COMMENT');
        break;
      case 'doctype':
        state = until('>', 'DOCTYPE');
        break;
      case 'cdata': {
        const end = s.indexOf(']]>', i);
        const to = end < 0 ? n : end;
        if (to > i) emit('DATA_TEXT', i, to);
        if (end < 0) state = 'eof';
        else {
          i = end + 3;
          state = 'data';
        }
        break;
      }
    }
  }
  // Emits everything up to `end` (or to the end of input) as one token.
  function until(end: string, type: Html5TokenType): State {
    const k = s.indexOf(end, i);
    emit(type, i, k < 0 ? n : k);
    if (k < 0) {
      i = n;
      return 'eof';
    }
    i = k + end.length;
    return 'data';
  }
}
