/**
 * `rulesmith check --format sarif`: one SARIF 2.1.0 run for code-scanning tools. The tool's
 * rules are the diagnostic codes found, each described in general with a help URI into the
 * documentation (an expression's code by the tables the editor uses, language/hints.ts and
 * language/diagnosticDocs.ts; a ruleset's or a Terraform file's by
 * rulesets/problemDescriptions.ts; the finding's `origin` says which: see `sarifRuleId`); each finding is
 * a result with its own message and the exact range the editor underlines (UTF-16
 * columns, as `run.columnKind` says; lines and columns 1-based, the end column exclusive).
 * Paths are URIs relative to the working directory (`%SRCROOT%`: the repository root in
 * CI), so GitHub places the annotations on the pull request's files.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DiagnosticCode } from '../language/diagnostics';
import { CODE_HELP } from '../language/hints';
import { PROBLEM_DESCRIPTIONS, problemDocsFor, type ProblemCode } from '../rulesets/problemDescriptions';
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

/**
 * The SARIF rule of a finding: its code, except for a code that the language and the
 * ruleset checks share with two meanings (`unknown-field`: an unknown field of the language,
 * or an unknown JSON key; `plan-required`), whose ruleset meaning is the rule
 * `ruleset/<code>` (a hierarchical id, as SARIF's `ruleId` allows). So each rule has one
 * description and one page, and a finding's rule does not depend on what else the run found
 * (code scanning matches alerts across runs by rule id).
 */
export function sarifRuleId(f: Pick<Finding, 'code' | 'origin'>): string {
  const shared = Object.hasOwn(CODE_HELP, f.code) && Object.hasOwn(PROBLEM_DESCRIPTIONS, f.code);
  return shared && f.origin !== 'expression' ? `ruleset/${f.code}` : f.code;
}

export function sarifLog(findings: readonly Finding[], toolVersion: string, cwd = process.cwd()): object {
  const rules: object[] = [];
  const ruleIndex = new Map<string, number>();
  const results = findings.map((f) => {
    const id = sarifRuleId(f);
    let index = ruleIndex.get(id);
    if (index === undefined) {
      index = rules.length;
      ruleIndex.set(id, index);
      const description = codeDescription(f.code, f.origin !== 'expression');
      const docs = problemDocsFor(f.code, f.origin);
      rules.push({
        id,
        name: (id === f.code ? '' : 'Ruleset') + title(f.code).replace(/ (.)/g, (_, c: string) => c.toUpperCase()),
        shortDescription: { text: id === f.code ? title(f.code) : `${title(f.code)} (ruleset)` },
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
      ruleId: id,
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
