/** `rulesmith check`: check .cfrule files, ruleset JSON files, or one `--expr`. */
import { checkExpression, type CheckOptions, type Diagnostic } from '../language/index';
import { engineReport, positionsIn } from '../language/report';
import { PHASES, PLANS, type Phase, type Plan } from '../language/scheme/types';
import { defaultCatalog } from '../managed/catalog';
import { findExpressions } from '../rulesets/expressions';
import { parseRulesetTree, propsOf, rulesetNodeOf } from '../rulesets/jsonTree';
import { terraformProblemOrigin, type ProblemOrigin } from '../rulesets/problemDescriptions';
import { validateRulesetJson } from '../rulesets/validate';
import { checkTerraform } from '../terraform/check';
import { parseHcl, type HclParse } from '../terraform/hcl';
import { locate } from '../terraform/locate';
import { InputError, readFileOrStdin, readInput, UsageError } from './input';
import type { Io, Parsed } from './io';
import type { Finding } from './finding';
import { githubAnnotations, sarifLog } from './sarif';

interface Checked {
  readonly finding: Finding;
  /** The engine-style block, from the expression text. */
  readonly report?: string;
  readonly ruleName?: string;
}

export function checkOptions(values: Parsed['values']): CheckOptions {
  const plan = values.plan as string | undefined;
  const phase = values.phase as string | undefined;
  if (plan !== undefined && !PLANS.includes(plan as Plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')} (got "${plan}")`);
  if (phase !== undefined && !(PHASES as readonly string[]).includes(phase)) throw new UsageError(`--phase must be a ruleset phase such as http_request_firewall_custom (got "${phase}")`);
  return { plan: plan as Plan | undefined, phase: phase as Phase | undefined };
}

export function outputFormat(values: Parsed['values']): 'text' | 'json' {
  const f = (values.format as string | undefined) ?? 'text';
  if (f !== 'text' && f !== 'json') throw new UsageError(`--format must be text or json (got "${f}")`);
  return f;
}

const CHECK_FORMATS = ['text', 'json', 'sarif', 'github'] as const;
type CheckFormat = (typeof CHECK_FORMATS)[number];

function checkFormat(values: Parsed['values']): CheckFormat {
  const f = (values.format as string | undefined) ?? 'text';
  if (!(CHECK_FORMATS as readonly string[]).includes(f)) throw new UsageError(`--format must be text, json, sarif or github (got "${f}")`);
  return f as CheckFormat;
}

/** Where an unexpected error happened: the file being worked on, when known (see `inFile`). */
export const FILE = Symbol('rulesmith.file');

/** Runs `work` on `file`; an unexpected error (a bug) is tagged with the file so its report can name it. */
export function inFile<T>(file: string, work: () => T): T {
  try {
    return work();
  } catch (e) {
    if (typeof e === 'object' && e !== null && !(e instanceof UsageError) && !(e instanceof InputError) && !(FILE in e)) {
      Object.defineProperty(e, FILE, { value: file });
    }
    throw e;
  }
}

const isTerraform = (file: string) => /\.tf$/i.test(file);

/** The files `--files-from` names (`-`: stdin): separated by NUL bytes when there is one (`git ls-files -z`), else one per line. */
function fileList(source: string, io: Io): string[] {
  const text = readFileOrStdin(io, source, 'the list of files');
  return text.split(text.includes('\0') ? '\0' : /\r?\n/).filter((f) => f !== '');
}

/** Checks; a Promise when a `.tf` file is among the files (HashiCorp's parser answers asynchronously). */
export function runCheck(p: Parsed, io: Io, toolVersion = '0.0.0'): number | Promise<number> {
  const options = checkOptions(p.values);
  const format = checkFormat(p.values);
  const expr = p.values.expr as string | undefined;
  const listed = p.values['files-from'] as string | undefined;
  // A list that may be empty (`git ls-files -z … | rulesmith check --files-from -` in a repository with none yet): then nothing is checked, and that passes.
  const files = listed === undefined ? p.files : [...p.files, ...fileList(listed, io)];
  if (expr !== undefined && (files.length > 0 || listed !== undefined)) throw new UsageError('give either --expr or files, not both');
  if (expr === undefined && files.length === 0 && listed === undefined) throw new UsageError('nothing to check: give files, --files-from or --expr');
  // GitHub code scanning rejects a whole SARIF upload when any result lacks a file location.
  if (expr !== undefined && format === 'sarif') {
    throw new UsageError('--format sarif needs files: code scanning places every result in a file, and an --expr expression is in none (put it in a .cfrule file, or use --format text or json)');
  }

  const texts = new Map<string, string>();
  for (const file of files) {
    texts.set(file, readInput(io, file));
  }
  const terraform = [...texts.keys()].filter(isTerraform);
  const report = (hcl: ReadonlyMap<string, HclParse>) => checkAll(expr, texts, hcl, options, format, io, toolVersion);
  if (terraform.length === 0) return report(new Map());
  return Promise.all(terraform.map(async (f) => [f, await parseHcl(texts.get(f)!)] as const)).then((parsed) => report(new Map(parsed)));
}

function checkAll(
  expr: string | undefined,
  texts: ReadonlyMap<string, string>,
  hcl: ReadonlyMap<string, HclParse>,
  options: CheckOptions,
  format: CheckFormat,
  io: Io,
  toolVersion: string,
): number {
  const results: Checked[] = [];
  let expressions = 0;
  if (expr !== undefined) {
    expressions++;
    results.push(...checkText(expr, null, null, options, (o) => o));
  }
  // Custom rulesets given on the command line may be executed by the others.
  const customRulesetIds = [...texts].filter(([f]) => !isTerraform(f)).flatMap(([f, t]) =>
    inFile(f, () => {
      const p = propsOf(rulesetNodeOf(parseRulesetTree(t).root));
      const id = p.get('id')?.value?.value;
      return p.get('kind')?.value?.value === 'custom' && typeof id === 'string' ? [id] : [];
    }),
  );
  for (const [file, text] of texts) inFile(file, () => {
    const parsed = hcl.get(file);
    if (parsed) {
      const located = locate(text);
      const problems = checkTerraform(text, parsed, { ...options, catalog: defaultCatalog, customRulesetIds }, located);
      expressions += parsed.ok ? located.expressions.length : 0;
      for (const pr of problems) {
        results.push({
          finding: { ...finding(file, pr.rule, text, pr.start, pr.end, pr.severity, pr.code, terraformProblemOrigin(pr), pr.message, pr.hint), ...(pr.resource ? { resource: pr.resource } : {}) },
          ...(pr.expression ? { report: engineReport(pr.expression.text, pr.expression.diagnostic) } : {}),
          ...(pr.ruleName !== undefined ? { ruleName: pr.ruleName } : {}),
        });
      }
    } else if (/\.json$/i.test(file)) {
      const fileResults: Checked[] = [];
      const { regions, problems } = findExpressions(text);
      for (const pr of problems) {
        results.push({ finding: finding(file, null, text, pr.offset, pr.offset + pr.length, 'error', 'invalid-json', 'ruleset', pr.message) });
      }
      if (regions.length === 0 && problems.length === 0) {
        const other = otherShape(text);
        if (other) {
          // Several rulesets in one file: not judged as one (its rulesets' keys would be "unknown fields" of a ruleset), and never a pass.
          results.push({ finding: finding(file, null, text, 0, 0, 'error', 'no-expressions', 'ruleset', `this is ${other}, and check reads one ruleset per file (a ruleset with "rules", an API response with "result.rules", or an array of rules): give each ruleset its own file, or read this one with eval --config or preview`) });
          return;
        }
        results.push({ finding: finding(file, null, text, 0, 0, 'warning', 'no-expressions', 'ruleset', 'no rule with an "expression" found (expected a ruleset with "rules", an API response with "result.rules", or an array of rules)') });
      }
      for (const r of regions) {
        expressions++;
        // The ruleset's own phase wins over --phase, as in the editor and for Terraform.
        const phase = r.phase !== undefined && (PHASES as readonly string[]).includes(r.phase) ? (r.phase as Phase) : options.phase;
        fileResults.push(...checkText(r.text, file, r.rule, { ...options, phase, ...(r.counting ? { countingExpression: true } : {}), ...(r.account ? { account: true } : {}) }, r.toDocument, text, r.ruleName));
      }
      // The ruleset's own problems (its expressions were checked above; syntax errors too).
      const names = new Map(regions.map((r) => [r.rule, r.ruleName]));
      for (const pr of validateRulesetJson(text, { catalog: defaultCatalog, plan: options.plan, phase: options.phase, customRulesetIds, expressions: false })) {
        if (pr.code === 'invalid-json') continue;
        const rule = pr.rule ?? null;
        fileResults.push({ finding: finding(file, rule, text, pr.start, pr.end, pr.severity, pr.code, pr.expression ? 'expression' : 'ruleset', pr.message, pr.hint), ruleName: rule === null ? undefined : names.get(rule) });
      }
      const at = (c: Checked) => c.finding.range.start;
      results.push(...fileResults.sort((a, b) => at(a).line - at(b).line || at(a).character - at(b).character));
    } else {
      expressions++;
      results.push(...checkText(text, file, null, options, (o) => o, text));
    }
  });

  const errors = results.filter((r) => r.finding.severity === 'error').length;
  // Notes: information and hints (e.g. a rule without ref); the core's expression checks give none.
  const notes = results.filter((r) => r.finding.severity === 'information' || r.finding.severity === 'hint').length;
  if (format === 'json') {
    io.out(`${JSON.stringify(results.map((r) => r.finding), null, 2)}\n`);
  } else if (format === 'sarif') {
    io.out(`${JSON.stringify(sarifLog(results.map((r) => r.finding), toolVersion), null, 2)}\n`);
  } else if (format === 'github') {
    io.out(githubAnnotations(results.map((r) => r.finding)));
  } else {
    for (const r of results) io.out(textBlock(r));
    const warnings = results.length - errors - notes;
    const noted = notes ? `, ${notes} note${notes === 1 ? '' : 's'}` : '';
    io.out(
      results.length === 0
        ? `ok: ${expressions} expression${expressions === 1 ? '' : 's'} checked, no problems\n`
        : `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}${noted} in ${expressions} expression${expressions === 1 ? '' : 's'}\n`,
    );
  }
  return errors > 0 ? 1 : 0;
}

/** What a JSON file holding several rulesets is (the zone files eval --config and preview read, a list of rulesets), or undefined. */
function otherShape(text: string): string | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
  const rulesets = (x: unknown) => Array.isArray(x) && x.some((r) => isObj(r) && Array.isArray(r.rules));
  if (isObj(v) && (isObj(v.entryPoints) || Object.keys(v).some((k) => (PHASES as readonly string[]).includes(k)))) return 'a zone file (entry points by phase)';
  if (rulesets(v)) return 'a list of rulesets';
  if (isObj(v) && rulesets(v.result)) return 'an API answer listing rulesets ("result": […])';
  return undefined;
}

function checkText(
  text: string,
  file: string | null,
  rule: number | null,
  options: CheckOptions,
  toDocument: (offset: number) => number,
  document = text,
  ruleName?: string,
): Checked[] {
  return checkExpression(text, options).diagnostics.map((d) => ({
    finding: finding(file, rule, document, toDocument(d.range.start), toDocument(d.range.end), d.severity, d.code, 'expression', d.message, d.hint),
    report: engineReport(text, d),
    ruleName,
  }));
}

function finding(
  file: string | null,
  rule: number | null,
  document: string,
  start: number,
  end: number,
  severity: Diagnostic['severity'],
  code: string,
  origin: ProblemOrigin,
  message: string,
  hint?: string,
): Finding {
  const at = positionsIn(document);
  return { file, rule, range: { start: at(start), end: at(end) }, severity, code, origin, message, ...(hint ? { hint } : {}) };
}

function textBlock(r: Checked): string {
  const f = r.finding;
  const where = f.file === null ? '--expr' : `${f.file}:${f.range.start.line + 1}:${f.range.start.character + 1}`;
  const rule = (f.rule === null ? '' : ` (rule ${f.rule + 1}${r.ruleName ? ` "${r.ruleName}"` : ''})`) + (f.resource ? ` in ${f.resource}` : '');
  const head = `${where}: ${f.severity}[${f.code}]${rule}\n`;
  const body = r.report ?? `${f.message}\n`;
  return `${head}${body}${f.hint ? `hint: ${f.hint}\n` : ''}\n`;
}
