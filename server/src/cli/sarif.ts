/**
 * `rulesmith check --format sarif`: one SARIF 2.1.0 run for code-scanning tools. The tool's
 * rules are the diagnostic codes found, each described in general (the hint table the
 * editor uses, language/hints.ts) with a help URI into the documentation; each finding is
 * a result with its own message and the exact range the editor underlines (UTF-16
 * columns, as `run.columnKind` says; lines and columns 1-based, the end column exclusive).
 * Paths are URIs relative to the working directory (`%SRCROOT%`: the repository root in
 * CI), so GitHub places the annotations on the pull request's files.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { docsFor } from '../language/diagnosticDocs';
import type { DiagnosticCode } from '../language/diagnostics';
import { CODE_HELP } from '../language/hints';
import type { RulesetProblemCode } from '../rulesets/validate';
import type { Finding } from './check';

export const SARIF_SCHEMA = 'https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json';

const LEVEL: Record<Finding['severity'], 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', information: 'note', hint: 'note' };

/** `unknown-field` -> `Unknown field`. */
function title(code: string): string {
  const words = code.replace(/-/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * Codes the ruleset validator also reports, meaning something else there (an unknown JSON
 * key, an action or ruleset the plan lacks): the language's hint would mislead. Listing
 * every shared code is checked by the compiler.
 */
const SHARED_WITH_RULESETS: Record<Extract<DiagnosticCode, RulesetProblemCode>, true> = { 'unknown-field': true, 'plan-required': true };

/** What a code means in general: never one finding's specifics, which stay in its result's message. */
export function codeDescription(code: string): string {
  const help = code in CODE_HELP && !(code in SHARED_WITH_RULESETS) ? CODE_HELP[code as DiagnosticCode] : undefined;
  return help?.hint ?? `${title(code)}: each result's message says what was found.`;
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
  const results = findings.map((f) => {
    let index = ruleIndex.get(f.code);
    if (index === undefined) {
      index = rules.length;
      ruleIndex.set(f.code, index);
      const description = codeDescription(f.code);
      const docs = docsFor(f.code);
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
