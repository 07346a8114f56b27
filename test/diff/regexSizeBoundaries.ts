/**
 * Where the engine's compiled-size limit falls for patterns with one repetition count N:
 * the largest N it accepts (N + 1 is refused), measured against wirefilter 0.7 (regex
 * 1.3.9). test/unit/language/regexSize.test.ts checks our estimate on both sides of each
 * boundary; test/diff/regexSizeLimit.test.ts asks the engine the same questions.
 */
export interface SizeBoundary {
  /** The pattern, with `N` for the count. */
  readonly pattern: string;
  /** The largest N the engine accepts. */
  readonly engine: number;
  /** Ours, where it differs, and why. */
  readonly ours?: { readonly max: number; readonly why: string };
}

const UNICODE_TABLES = "re2js's Unicode tables are newer than regex-syntax 0.6.18's (Unicode 13): more ranges, a larger class";

export const SIZE_BOUNDARIES: readonly SizeBoundary[] = [
  { pattern: 'a{N}', engine: 327679 },
  { pattern: '[a-z]{N}', engine: 327679 },
  { pattern: '\\xFF{N}', engine: 327679 },
  { pattern: '(?s).{N}', engine: 327679 },
  { pattern: '^a{N}', engine: 327679 },
  { pattern: '\\B{N}', engine: 327679 },
  { pattern: 'a{N}(b)', engine: 327678 },
  { pattern: 'a{N,}', engine: 327677 },
  { pattern: 'a{N}b{100}', engine: 327579 },
  { pattern: 'a{0,N}', engine: 163839 },
  { pattern: '(?u)é{N}', engine: 163840 },
  { pattern: '(a){N}', engine: 109227 },
  { pattern: '(?i)a{N}', engine: 109227 },
  { pattern: '[^a]{N}', engine: 109227 },
  { pattern: '.{N}', engine: 109227 },
  { pattern: '(?:ab|cd){N}', engine: 65535 },
  { pattern: '(.*){1,N}', engine: 46812 },
  { pattern: '\\w{N}', engine: 46812 },
  { pattern: '((a){2}){N}', engine: 40960 },
  { pattern: '(?u).{N}', engine: 8857 },
  { pattern: '(a{1000}){N}', engine: 327 },
  { pattern: '(a{N}){1000}', engine: 325 },
  { pattern: '(?u)\\pL{N}', engine: 111, ours: { max: 99, why: UNICODE_TABLES } },
  { pattern: '(?u)\\w{N}', engine: 93, ours: { max: 83, why: UNICODE_TABLES } },
];
