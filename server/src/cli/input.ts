/**
 * What every command shares about its command line and input: the options (strict, none
 * silently given twice), whole numbers, the two ways bad input ends a command (both exit
 * status 2: UsageError with the usage text, InputError without), and reading a file as an
 * InputError that says why in words.
 */
import { parseArgs } from 'node:util';
import { fsReason } from './files';
import type { Io } from './io';

/** Bad usage: reported with the usage text, exit status 2. */
export class UsageError extends Error {}

/** Input that cannot be used: reported with exit status 2, without the usage text. */
export class InputError extends Error {
  constructor(readonly lines: readonly string[]) {
    super(lines.join('\n'));
  }
}

export type OptionValues = Record<string, string | boolean | string[] | undefined>;

/** The command line's options (strict), refusing one given twice unless it may repeat (the last would silently win). */
export function parseOptions(args: readonly string[], options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>): { values: OptionValues; files: string[] } {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true, tokens: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const seen = new Set<string>();
  for (const t of parsed.tokens) {
    if (t.kind !== 'option' || options[t.name]?.multiple) continue;
    if (seen.has(t.name)) throw new UsageError(`--${t.name} is given more than once; give it once${t.name === 'expr' ? ' (to check several expressions, put each in a .cfrule file)' : ''}`);
    seen.add(t.name);
  }
  return { values: parsed.values as OptionValues, files: parsed.positionals };
}

/** A whole number written as digits only (`1e2`, `0x40`, ` 50` are not), at most 9 of them; else undefined. */
export function wholeNumber(text: string): number | undefined {
  return /^\d{1,9}$/.test(text) ? Number(text) : undefined;
}

/** A file's text; an InputError (`cannot read [what ]FILE: why`) when it cannot be read. */
export function readInput(io: Io, file: string, what?: string): string {
  return readOrSay(() => io.readFile(file), file, what);
}

/** How messages name standard input. */
export const STDIN_NAME = '<stdin>';

/** Standard input's text; an InputError (`cannot read [what ]<stdin>: why`: not UTF-8, not readable) when it cannot be read. */
export function readStdinInput(io: Io, what?: string): string {
  return readOrSay(() => io.readStdin(), STDIN_NAME, what);
}

/** An argument that names a file or, as `-`, standard input: its text (readInput, readStdinInput). */
export function readFileOrStdin(io: Io, file: string, what?: string): string {
  return file === '-' ? readStdinInput(io, what) : readInput(io, file, what);
}

/** How messages name such an argument: `<stdin>` for `-`. */
export function inputName(file: string): string {
  return file === '-' ? STDIN_NAME : file;
}

function readOrSay(read: () => string, name: string, what: string | undefined): string {
  try {
    return read();
  } catch (e) {
    throw new InputError([`rulesmith: cannot read ${what ? `${what} ` : ''}${name}: ${fsReason(e)}`]);
  }
}
