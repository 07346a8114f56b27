/**
 * What a CLI command is given: its I/O (the terminal, files, stdin: tests give their own) and
 * its parsed arguments. Apart from main.ts, which dispatches to the commands, so that a
 * command never imports the dispatcher.
 */

/** The terminal, files and stdin a command uses. */
export interface Io {
  readonly out: (s: string) => void;
  readonly err: (s: string) => void;
  readonly readFile: (path: string) => string;
  readonly writeFile: (path: string, text: string) => void;
  readonly readStdin: () => string;
  /** A file's first `maxBytes` bytes (binary string) and its size, for body files (default: files.ts readHead). */
  readonly readHead?: (path: string, maxBytes: number) => { head: string; size: number };
  /** Whether stderr is a terminal (progress is shown only then). */
  readonly errIsTTY?: boolean;
}

/** A command's flags (by name) and its file arguments. */
export interface Parsed {
  readonly values: Record<string, string | boolean | undefined>;
  readonly files: readonly string[];
}
