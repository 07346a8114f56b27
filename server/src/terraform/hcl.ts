/**
 * HashiCorp's HCL parser (`@cdktf/hcl2json`: the Go parser compiled to WebAssembly): a `.tf`
 * file's meaning as Terraform's JSON syntax, or its first syntax error with a position.
 * The package starts a Go runtime when loaded, so it is loaded on first use only: commands
 * and documents without Terraform never pay for it.
 */
export type HclJson = Record<string, unknown>;

export type HclParse =
  | { readonly ok: true; readonly json: HclJson }
  | { readonly ok: false; readonly error: HclSyntaxError };

export interface HclSyntaxError {
  /** Source offsets of the range the parser reports. */
  readonly start: number;
  readonly end: number;
  readonly message: string;
}

type Parser = (name: string, text: string) => Promise<HclJson>;
let parser: Promise<Parser> | undefined;

function load(): Promise<Parser> {
  parser ??= import('@cdktf/hcl2json').then((m) => (m.parse ?? (m as unknown as { default: { parse: Parser } }).default.parse) as Parser);
  return parser;
}

const NAME = 'main.tf';

/** Parses one file. Never throws for bad HCL: the error comes back as a value. */
export async function parseHcl(text: string): Promise<HclParse> {
  const parse = await load();
  try {
    return { ok: true, json: await parse(NAME, text) };
  } catch (e) {
    return { ok: false, error: syntaxError(text, e instanceof Error ? e.message : String(e)) };
  }
}

/**
 * `parse config: [main.tf:3,7-4,1: Invalid expression; Expected the start of an expression, …]`
 * -> the range (HCL's lines and columns are 1-based) and `Invalid expression: Expected …`.
 */
export function syntaxError(text: string, raw: string): HclSyntaxError {
  const m = /main\.tf:(\d+),(\d+)-(?:(\d+),)?(\d+): ([^;\]]*)(?:; ([^\]]*))?/.exec(raw);
  if (!m) return { start: 0, end: 0, message: raw.replace(/^parse config: /, '') };
  const line = Number(m[1]);
  const start = offsetOf(text, line, Number(m[2]));
  const end = Math.max(start, offsetOf(text, m[3] ? Number(m[3]) : line, Number(m[4])));
  const detail = m[6]?.trim().replace(/[.\s]+$/, '');
  return { start, end, message: detail ? `${m[5].trim()}: ${detail}` : m[5].trim() };
}

/** The offset of a 1-based line and column (columns counted in code points, as HCL does). */
function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf('\n', offset);
    if (nl < 0) return text.length;
    offset = nl + 1;
  }
  for (let c = 1; c < column && offset < text.length && text[offset] !== '\n'; c++) offset += text.codePointAt(offset)! > 0xffff ? 2 : 1;
  return offset;
}
