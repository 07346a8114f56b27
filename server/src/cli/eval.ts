/** `rulesmith eval`: evaluate one expression against field values given as JSON. */
import { compileExpression, prepareFields } from '../language/index';
import { engineReport } from '../language/report';
import { checkOptions, outputFormat } from './check';
import { UsageError, type Io, type Parsed } from './main';

export function runEval(p: Parsed, io: Io): number {
  const format = outputFormat(p.values);
  const options = checkOptions(p.values);
  const expr = p.values.expr as string | undefined;
  const fieldsFile = p.values.fields as string | undefined;
  if (expr === undefined) throw new UsageError('eval needs --expr');
  if (fieldsFile === undefined) throw new UsageError('eval needs --fields FILE.json (use "{}" in a file for no fields)');
  if (p.files.length > 0) throw new UsageError(`unexpected argument "${p.files[0]}"`);

  let input: unknown;
  try {
    input = JSON.parse(fieldsFile === '-' ? io.readStdin() : io.readFile(fieldsFile));
  } catch (e) {
    const reason = e instanceof SyntaxError ? `invalid JSON: ${e.message}` : ((e as NodeJS.ErrnoException).code ?? (e as Error).message);
    throw new UsageError(`cannot read field values from ${fieldsFile}: ${reason}`);
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new UsageError(`${fieldsFile} must hold a JSON object of field values, e.g. {"http.host": "example.com"}`);
  }

  const { filter, diagnostics } = compileExpression(expr, options);
  const { values, errors } = prepareFields(input as Record<string, unknown>);
  const exprErrors = diagnostics.filter((d) => d.severity === 'error');
  if (!filter || errors.length > 0) {
    if (format === 'json') {
      io.out(`${JSON.stringify({ matched: null, diagnostics: exprErrors, fieldErrors: errors }, null, 2)}\n`);
    } else {
      for (const d of exprErrors) io.err(`${engineReport(expr, d)}${d.hint ? `hint: ${d.hint}\n` : ''}`);
      for (const e of errors) io.err(`${fieldsFile}: ${e.field}: ${e.message}\n`);
    }
    return 2;
  }
  const matched = filter.matches(values);
  io.out(format === 'json' ? `${JSON.stringify({ matched })}\n` : `${matched}\n`);
  return 0;
}
