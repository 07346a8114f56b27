/**
 * `rulesmith check --format sarif`: one SARIF 2.1.0 run for code-scanning tools. The tool's
 * rules are the diagnostic codes found (help text and a help URI into the documentation),
 * each finding a result whose region is the exact range the editor underlines (UTF-16
 * columns, as `run.columnKind` says; lines and columns 1-based, the end column exclusive).
 * Paths stay relative to where `check` ran (the repository root in CI), so GitHub places
 * the annotations on the pull request's files.
 */
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { docsFor } from '../language/diagnosticDocs';
import type { Finding } from './check';

export const SARIF_SCHEMA = 'https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json';

const LEVEL: Record<Finding['severity'], 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', information: 'note', hint: 'note' };

/** `unknown-field` -> `Unknown field`. */
function title(code: string): string {
  const words = code.replace(/-/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A file name as a SARIF artifact URI: relative paths as URI references, absolute ones as file: URLs. */
export function artifactUri(file: string): string {
  if (isAbsolute(file)) return pathToFileURL(file).href;
  return file.split(/[\\/]/).map(encodeURIComponent).join('/');
}

export function sarifLog(findings: readonly Finding[], toolVersion: string): object {
  const rules: object[] = [];
  const ruleIndex = new Map<string, number>();
  const results = findings.map((f) => {
    let index = ruleIndex.get(f.code);
    if (index === undefined) {
      index = rules.length;
      ruleIndex.set(f.code, index);
      const help = f.hint ?? f.message;
      rules.push({
        id: f.code,
        name: title(f.code).replace(/ (.)/g, (_, c: string) => c.toUpperCase()),
        shortDescription: { text: title(f.code) },
        help: { text: `${help}\nSee ${docsFor(f.code)}` },
        helpUri: docsFor(f.code),
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
      ...(f.file === null ? {} : { locations: [{ physicalLocation: { artifactLocation: { uri: artifactUri(f.file) }, region } }] }),
      ...(f.rule === null ? {} : { properties: { rule: f.rule } }),
    };
  });
  return {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'rulesmith', version: toolVersion, informationUri: 'https://developers.cloudflare.com/ruleset-engine/rules-language/', rules } },
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
