/** `rulesmith format`: format .cfrule files in place, or stdin to stdout; `--check` only reports. */
import { formatExpression } from '../language/index';
import { engineReport } from '../language/report';
import { fsReason } from './files';
import { readInput, readStdinInput, STDIN_NAME, UsageError, wholeNumber } from './input';
import type { Io, Parsed } from './io';

export function runFormat(p: Parsed, io: Io): number {
  const notation = (p.values.notation as string | undefined) ?? 'preserve';
  if (!['preserve', 'english', 'c-like'].includes(notation)) throw new UsageError(`--notation must be preserve, english or c-like (got "${notation}")`);
  const widthText = p.values.width as string | undefined;
  const width = widthText === undefined ? undefined : wholeNumber(widthText);
  if (widthText !== undefined && (width === undefined || width < 20)) throw new UsageError(`--width must be a whole number of at least 20 (got "${widthText}")`);
  const options = { notation: notation as 'preserve', width };
  const check = p.values.check === true;

  if (p.files.length === 0) {
    const input = readStdinInput(io);
    const r = formatExpression(input, options);
    if (r.text === undefined) return reportUnparsable(STDIN_NAME, input, r.diagnostics, io);
    // Judged as a file's text is (below).
    if (check) return asWritten(r.text, input) === input ? 0 : (io.err(`${STDIN_NAME} is not formatted\n`), 1);
    io.out(asWritten(r.text, input));
    return 0;
  }

  let status = 0;
  for (const file of p.files) {
    if (!file.endsWith('.cfrule')) throw new UsageError(`format works on .cfrule files (got ${file}); ruleset JSON is formatted by your JSON formatter`);
    const text = readInput(io, file);
    const r = formatExpression(text, options);
    if (r.text === undefined) {
      status = Math.max(status, reportUnparsable(file, text, r.diagnostics, io));
      continue;
    }
    const formatted = asWritten(r.text, text);
    if (formatted === text) continue;
    if (check) {
      io.out(`${file} is not formatted\n`);
      status = 1;
    } else {
      try {
        io.writeFile(file, formatted);
      } catch (e) {
        io.err(`rulesmith: cannot write ${file}: ${fsReason(e)}; it is unchanged\n`);
        status = 2;
        continue;
      }
      io.out(`formatted ${file}\n`);
    }
  }
  return status;
}

/** The formatted expression as its file holds it: the line ending the file uses (CRLF on a Windows checkout), and one at the end. */
function asWritten(formatted: string, original: string): string {
  const eol = original.includes('\r\n') ? '\r\n' : '\n';
  return `${formatted.replace(/\n/g, eol)}${eol}`;
}

function reportUnparsable(name: string, text: string, diagnostics: readonly import('../language/index').Diagnostic[], io: Io): number {
  io.err(`${name}: not formatted, the expression has errors:\n`);
  for (const d of diagnostics) io.err(engineReport(text, d));
  return 1;
}
