/** jsonc-parser's error codes in words (its own names, such as `ValueExpected`, are identifiers, not messages). */
import { printParseErrorCode, type ParseErrorCode } from 'jsonc-parser';

const WORDS: Readonly<Record<string, string>> = {
  InvalidSymbol: 'unexpected character (a byte-order mark, or text that is not JSON)',
  InvalidNumberFormat: 'invalid number',
  PropertyNameExpected: 'expected a property name in double quotes',
  ValueExpected: 'expected a value (a trailing comma, or nothing where a value belongs)',
  ColonExpected: "expected ':' after the property name",
  CommaExpected: "expected ',' between values",
  CloseBraceExpected: "expected '}' (an object is not closed)",
  CloseBracketExpected: "expected ']' (an array is not closed)",
  EndOfFileExpected: 'unexpected text after the end of the JSON value',
  InvalidCommentToken: 'comments are not JSON',
  UnexpectedEndOfComment: 'a comment is not closed',
  UnexpectedEndOfString: 'a string is not closed',
  UnexpectedEndOfNumber: 'a number ends too early',
  InvalidUnicode: 'invalid \\u escape (four hexadecimal digits expected)',
  InvalidEscapeCharacter: 'invalid escape in a string',
  InvalidCharacter: 'a control character in a string (escape it, e.g. \\n or \\t)',
};

export function jsonErrorText(code: ParseErrorCode): string {
  const name = printParseErrorCode(code);
  return WORDS[name] ?? name;
}
