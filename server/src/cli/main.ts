/**
 * The `rulesmith` command line. A thin adapter over the core: it reads files,
 * calls the core, prints, and sets the exit code (0 ok, 1 problems found, 2 bad usage).
 */
import { readFileSync } from 'node:fs';
import { FILE, runCheck } from './check';
import { runEvalCommand } from './eval';
import { boundRegexBacktracking } from '../regexBudget';
import { readHead, readText, writeTextAtomic } from './files';
import { runFormat } from './format';
import { InputError, parseOptions, UsageError } from './input';
import type { Io, Parsed } from './io';
import { runFtwCommand } from './ftw';
import { runPreviewCommand } from './preview';
import { runServe, serveArgs, serveOptions } from './serve';
import { runTerraformCommand } from './terraform';

const USAGE = `Usage:
  rulesmith check [--phase PHASE] [--plan free|pro|business|enterprise] [--format text|json|sarif|github] FILE... | --files-from LIST|-
  rulesmith check --expr 'EXPRESSION' [--phase PHASE] [--plan PLAN] [--format text|json|github]
  rulesmith eval --expr 'EXPRESSION' --fields FIELDS.json [--format text|json]
  rulesmith eval --config ENTRY.ruleset.json [--custom CUSTOM.ruleset.json ...] --requests FILE [--format text|json] [--trace] [--body-limit BYTES]
  rulesmith preview --config ENTRY.ruleset.json [--custom CUSTOM.ruleset.json ...] [--requests FILE_OR_DIR] [--attacks DIR] [--max-attacks 1000] [--thresholds 25,40,60] [--format text|json]
  rulesmith ftw DIR [--pl 1|2|3|4] [--threshold T] [--format text|json]   (CRS regression tests against the OWASP ruleset)
  rulesmith serve [--port 8787] [--host 127.0.0.1] [--db FILE] [--seed demo] [--legacy on|sunset] [--body-limit BYTES] [--ruleset-write-rate N]   (the local rules service)
      [--events on|off] [--events-retention 7d] [--events-max-rows N]   (security events, docs/events.md)
      [--proxy ZONE=UPSTREAM_URL ...] [--proxy-listen 127.0.0.1:8081] [--inspect-body-limit BYTES] [--upstream-timeout S]
      [--header-timeout S] [--challenge interstitial|pass|block] [--trust-proxy] [--trust-proxy-from CIDR,...] [--fields-file FILE] [--proxy-workers N] [--proxy-queue N] [--proxy-max-connections N]   (the WAF proxy, docs/proxy.md)
  rulesmith format [--check] [--notation preserve|english|c-like] [--width N] [FILE...]   (stdin when no FILE)
  rulesmith terraform export --zone ZONE_ID [--api URL] [--provider 4|5]   (token: RULESMITH_API_TOKEN)
  rulesmith terraform import FILE.tf [--out DIR]   (cloudflare_ruleset resources -> ruleset JSON)

FILE is a .cfrule file (one expression), ruleset JSON (every rule's "expression") or Terraform .tf
(the expressions and rulesets of cloudflare_ruleset, cloudflare_filter, cloudflare_firewall_rule).
ENTRY is an entry-point ruleset with its "phase", an object mapping phases to entry points,
or a zone {"entryPoints", "customRulesets", "legacy", "plan"}. Requests: .http, CRS ftw .yaml,
or .json field values. preview's attacks: the built-in OWASP CRS 3.3.4 regression requests,
or the ftw YAML under --attacks DIR instead. eval --config and preview exit 2 on unusable input.
Exit status: 0 no errors, 1 errors found (or files to format with --check), 2 bad usage, unusable input
or an internal error (a bug, reported on one line).`;


/** The exit status of a command that answers at once (everything but Terraform files and `terraform export`: use `run`). */
export function main(argv: readonly string[], io: Io): number {
  const code = run(argv, io);
  if (typeof code !== 'number') throw new Error(`rulesmith ${argv[0]} answers asynchronously here: call run()`);
  return code;
}

/** The exit status; a Promise for the commands that wait on something (Terraform's parser, the network). */
export function run(argv: readonly string[], io: Io): number | Promise<number> {
  const [command, ...rest] = argv;
  // `rulesmith eval --help`: the usage, as with `rulesmith --help` (not after `--`, where it is a file).
  const end = rest.indexOf('--');
  if (command !== undefined && (end < 0 ? rest : rest.slice(0, end)).some((a) => a === '--help' || a === '-h')) {
    io.out(`${USAGE}\n`);
    return 0;
  }
  try {
    return dispatch(command, rest, io);
  } catch (e) {
    return failed(e, io, command);
  }
}

function dispatch(command: string | undefined, rest: readonly string[], io: Io): number | Promise<number> {
  switch (command) {
    case 'check':
      return settle(runCheck(parse(rest, { phase: 'string', plan: 'string', format: 'string', expr: 'string', 'files-from': 'string' }), io, version()), io, command);
    case 'terraform':
      return settle(runTerraformCommand(rest, io), io, command);
    case 'eval':
      return runEvalCommand(rest, io);
    case 'preview':
      return runPreviewCommand(rest, io);
    case 'ftw':
      return runFtwCommand(rest, io);
    case 'format':
      return runFormat(parse(rest, { check: 'boolean', notation: 'string', width: 'string' }), io);
    case 'serve':
      return runServe(serveOptions(serveArgs(rest)), io);
    case '--version':
    case 'version':
      io.out(`${version()}\n`);
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      io.out(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/** The one-line report of an unexpected error (a bug): exit 2, never 1 (which CI reads as "errors found"). */
export function internalError(e: unknown, command: string | undefined): string {
  const file = typeof e === 'object' && e !== null && FILE in e ? ` on ${String((e as Record<symbol, unknown>)[FILE])}` : '';
  const message = (e instanceof Error ? `${e.name === 'Error' ? '' : `${e.name}: `}${e.message}` : String(e)).replace(/\s*\n\s*/g, ' ');
  return `rulesmith: internal error while running ${command ?? 'rulesmith'}${file}: ${message} (a bug in rulesmith: please report it with the command and the input)\n`;
}

/** Bad usage or unusable input: exit 2; anything else is a bug, reported on one line, also exit 2. */
function failed(e: unknown, io: Io, command?: string): number {
  if (e instanceof UsageError) {
    io.err(`rulesmith: ${e.message}\n\n${USAGE}\n`);
    return 2;
  }
  // Unusable input (a file, a rule, a request): the reasons, without the usage text.
  if (e instanceof InputError) {
    for (const l of e.lines) io.err(`${l}\n`);
    return 2;
  }
  io.err(internalError(e, command));
  return 2;
}

/** An asynchronous command's errors end it as a synchronous one's do. */
function settle(code: number | Promise<number>, io: Io, command: string): number | Promise<number> {
  return typeof code === 'number' ? code : code.catch((e: unknown) => failed(e, io, command));
}


function parse(args: readonly string[], options: Record<string, 'string' | 'boolean'>): Parsed {
  const { values, files } = parseOptions(args, Object.fromEntries(Object.entries(options).map(([k, type]) => [k, { type }])));
  return { values: values as Parsed['values'], files };
}

function version(): string {
  try {
    return JSON.parse(readFileSync(`${__dirname}/../../package.json`, 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

/* c8 ignore next 26 -- process wiring */
if (require.main === module) {
  boundRegexBacktracking();
  // Output piped into `head` and the like: stop quietly when the reader has gone.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw e;
    });
  }
  const code = run(process.argv.slice(2), {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    readFile: (p) => readText(p),
    writeFile: (p, t) => writeTextAtomic(p, t),
    readStdin: () => readText(0),
    readHead,
    errIsTTY: process.stderr.isTTY === true,
  });
  if (typeof code === 'number') process.exitCode = code;
  else
    code.then(
      (c) => (process.exitCode = c),
      (e: unknown) => {
        process.stderr.write(internalError(e, process.argv[2]));
        process.exitCode = 2;
      },
    );
}
