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
export function isHtml5Space(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\n' || ch === '\v' || ch === '\f' || ch === '\r';
}

function isAsciiLetter(ch: string): boolean {
  const c = ch.charCodeAt(0);
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

/** Tokenizes `input` starting in `start`; see the test-html5-* vectors for the exact output. */
export function html5Tokens(input: string, start: Html5StartState = 'data'): Html5Token[] {
  const s = input;
  const n = s.length;
  const out: Html5Token[] = [];
  const emit = (type: Html5TokenType, value: string): void => {
    out.push({ type, value });
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
    emit('TAG_NAME_CLOSE', '>');
    i++;
    return 'data';
  };
  const skipSpace = (): void => {
    while (i < n && isHtml5Space(s[i])) i++;
  };

  while (state !== 'eof') {
    switch (state) {
      case 'data': {
        if (i >= n) {
          state = 'eof';
          break;
        }
        const lt = s.indexOf('<', i);
        if (lt < 0) {
          emit('DATA_TEXT', s.slice(i));
          i = n;
          state = 'eof';
        } else {
          if (lt > i) emit('DATA_TEXT', s.slice(i, lt));
          i = lt + 1;
          state = 'tagOpen';
        }
        break;
      }
      case 'tagOpen': {
        if (i >= n) {
          emit('DATA_TEXT', '<');
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
          emit('DATA_TEXT', '<');
          state = 'data';
        }
        break;
      }
      case 'endTagOpen': {
        if (i >= n) {
          emit('DATA_TEXT', '</');
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
        while (j < n && !isHtml5Space(s[j]) && s[j] !== '/' && s[j] !== '>') j++;
        const name = s.slice(i, j);
        i = j;
        if (closing && i < n && s[i] === '>') {
          // a plain end tag "</name>"
          emit('TAG_CLOSE', name);
          i++;
          state = 'data';
          break;
        }
        emit('TAG_NAME_OPEN', name);
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
        while (j < n && !isHtml5Space(s[j]) && s[j] !== '/' && s[j] !== '>' && s[j] !== '=') j++;
        emit('ATTR_NAME', s.slice(i, j));
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
          emit('ATTR_VALUE', '');
          state = closeTag();
        } else state = 'attrValueUnquoted';
        break;
      }
      case 'attrValueQuoted': {
        const end = s.indexOf(quote, i);
        if (end < 0) {
          emit('ATTR_VALUE', s.slice(i));
          i = n;
          state = 'eof';
        } else {
          emit('ATTR_VALUE', s.slice(i, end));
          i = end + 1;
          state = 'afterAttrValueQuoted';
        }
        break;
      }
      case 'afterAttrValueQuoted': {
        if (i >= n) state = 'eof';
        else if (isHtml5Space(s[i])) {
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
        while (j < n && !isHtml5Space(s[j]) && s[j] !== '>') j++;
        emit('ATTR_VALUE', s.slice(i, j));
        i = j;
        if (i >= n) state = 'eof';
        else if (s[i] === '>') state = closeTag();
        else state = 'beforeAttrName';
        break;
      }
      case 'selfClosing': {
        if (i >= n) state = 'eof';
        else if (s[i] === '>') {
          emit('TAG_NAME_SELFCLOSE', '/>');
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
          emit('TAG_COMMENT', '');
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
        emit('TAG_COMMENT', s.slice(i, k));
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
        const text = s.slice(i, end < 0 ? n : end);
        if (text !== '') emit('DATA_TEXT', text);
        if (end < 0) state = 'eof';
        else {
          i = end + 3;
          state = 'data';
        }
        break;
      }
    }
  }
  return out;

  // Emits everything up to `end` (or to the end of input) as one token.
  function until(end: string, type: Html5TokenType): State {
    const k = s.indexOf(end, i);
    emit(type, s.slice(i, k < 0 ? n : k));
    if (k < 0) {
      i = n;
      return 'eof';
    }
    i = k + end.length;
    return 'data';
  }
}
