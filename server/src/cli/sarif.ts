/**
 * `rulesmith check --format sarif`: one SARIF 2.1.0 run for code-scanning tools. The tool's
 * rules are the diagnostic codes found, each described in general with a help URI into the
 * documentation (an expression's code by the tables the editor uses, language/hints.ts and
 * language/diagnosticDocs.ts; a ruleset's or a Terraform file's by
 * rulesets/problemDescriptions.ts; the finding's `origin` says which); each finding is
 * a result with its own message and the exact range the editor underlines (UTF-16
 * columns, as `run.columnKind` says; lines and columns 1-based, the end column exclusive).
 * Paths are URIs relative to the working directory (`%SRCROOT%`: the repository root in
 * CI), so GitHub places the annotations on the pull request's files.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DiagnosticCode } from '../language/diagnostics';
import { CODE_HELP } from '../language/hints';
import { PROBLEM_DESCRIPTIONS, problemDocsFor, type ProblemCode, type ProblemOrigin } from '../rulesets/problemDescriptions';
import type { Finding } from './finding';

export const SARIF_SCHEMA = 'https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json';

const LEVEL: Record<Finding['severity'], 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', information: 'note', hint: 'note' };

/** `unknown-field` -> `Unknown field`. */
function title(code: string): string {
  const words = code.replace(/-/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * What a code means in general: never one finding's specifics, which stay in its result's
 * message. `rulesetProblem`: the ruleset or Terraform checks found it (a finding's `origin`
 * other than `expression`), so a code shared with the language (`unknown-field`: an unknown
 * JSON key there; `plan-required`: also an action, payload logging or a managed ruleset) has
 * its ruleset meaning.
 */
export function codeDescription(code: string, rulesetProblem = false): string {
  const ruleset = Object.hasOwn(PROBLEM_DESCRIPTIONS, code) ? PROBLEM_DESCRIPTIONS[code as ProblemCode] : undefined;
  const language = Object.hasOwn(CODE_HELP, code) ? CODE_HELP[code as DiagnosticCode].hint : undefined;
  return (rulesetProblem ? (ruleset ?? language) : (language ?? ruleset)) ?? `${title(code)}: each result's message says what was found.`;
}

/** The base that relative artifact URIs are resolved against (GitHub reads them from the repository root). */
const SRCROOT = '%SRCROOT%';

/**
 * A file as given on the command line -> a SARIF artifact location: inside `cwd`, a
 * forward-slash URI relative to it (`./a`, `b/../a` and `/cwd/a` all become `a`); outside
 * it, a `file:` URI, which may have no base.
 */
export function artifactLocation(file: string, cwd: string): { uri: string; uriBaseId?: string } {
  const absolute = resolve(cwd, file);
  const rel = relative(resolve(cwd), absolute);
  // `..` alone or followed by a separator leaves cwd (a name like `..rules` does not); on
  // Windows another drive gives an absolute path.
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return { uri: pathToFileURL(absolute).href };
  return { uri: rel.split(/[\\/]/).map(encodeURIComponent).join('/'), uriBaseId: SRCROOT };
}

export function sarifLog(findings: readonly Finding[], toolVersion: string, cwd = process.cwd()): object {
  const rules: object[] = [];
  const ruleIndex = new Map<string, number>();
  // One rule per code: a code the ruleset or Terraform checks found anywhere in the run has its
  // ruleset meaning and page (its description also covers an expression's field or function).
  const origins = new Map<string, ProblemOrigin>();
  for (const f of findings) if (f.origin !== 'expression' && !origins.has(f.code)) origins.set(f.code, f.origin);
  const results = findings.map((f) => {
    let index = ruleIndex.get(f.code);
    if (index === undefined) {
      index = rules.length;
      ruleIndex.set(f.code, index);
      const origin = origins.get(f.code) ?? 'expression';
      const description = codeDescription(f.code, origin !== 'expression');
      const docs = problemDocsFor(f.code, origin);
      rules.push({
        id: f.code,
        name: title(f.code).replace(/ (.)/g, (_, c: string) => c.toUpperCase()),
        shortDescription: { text: title(f.code) },
        fullDescription: { text: description },
        help: { text: `${description}\nSee ${docs}`, markdown: `${description}\n\n[Documentation](${docs})` },
        helpUri: docs,
        defaultConfiguration: { level: LEVEL[f.severity] },
      });
    }
    const message = f.hint ? `${f.message}\n${f.hint}` : f.message;
    const region = {
      startLine: f.range.start.line + 1,
      startColumn: f.range.start.character + 1,
      endLine: f.range.end.line + 1,
      endColumn: f.range.end.character + 1,
    };
    return {
      ruleId: f.code,
      ruleIndex: index,
      level: LEVEL[f.severity],
      message: { text: message },
      ...(f.file === null ? {} : { locations: [{ physicalLocation: { artifactLocation: artifactLocation(f.file, cwd), region } }] }),
      ...(f.rule === null ? {} : { properties: { rule: f.rule } }),
    };
  });
  return {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'rulesmith', version: toolVersion, informationUri: 'https://developers.cloudflare.com/ruleset-engine/rules-language/', rules } },
        // Where %SRCROOT% is, for viewers that open the files (GitHub uses the repository root).
        originalUriBaseIds: { [SRCROOT]: { uri: pathToFileURL(cwd.endsWith(sep) ? cwd : cwd + sep).href } },
        columnKind: 'utf16CodeUnits',
        results,
      },
    ],
  };
}

/** `%`, CR and LF escaped as GitHub's workflow commands require (and `:` `,` in properties). */
function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

const COMMAND: Record<Finding['severity'], 'error' | 'warning' | 'notice'> = { error: 'error', warning: 'warning', information: 'notice', hint: 'notice' };

/** `--format github`: one workflow command per finding (`::error file=…,line=…,col=…::message`). */
export function githubAnnotations(findings: readonly Finding[]): string {
  return findings
    .map((f) => {
      const props =
        f.file === null
          ? [`title=${escapeProperty(f.code)}`]
          : [
              `file=${escapeProperty(f.file)}`,
              `line=${f.range.start.line + 1}`,
              `col=${f.range.start.character + 1}`,
              `endLine=${f.range.end.line + 1}`,
              `endColumn=${f.range.end.character + 1}`,
              `title=${escapeProperty(f.code)}`,
            ];
      return `::${COMMAND[f.severity]} ${props.join(',')}::${escapeData(f.hint ? `${f.message}\n${f.hint}` : f.message)}\n`;
    })
    .join('');
}
