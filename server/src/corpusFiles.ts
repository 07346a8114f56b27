/**
 * Reads the paranoia preview's attack corpus (requests/attackCorpus.ts) from disk: the
 * built-in one the build writes beside the bundled CLI (server/out/crs-attack-corpus.json),
 * or a folder of ftw YAML files searched recursively. Used by `rulesmith preview` and by the
 * extension's preview worker. Errors are `CorpusError`s whose message says what is wrong
 * and how to fix it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { attackEntries, decodeAttackCorpus, type AttackCorpus } from './requests/attackCorpus';

export const BUILT_IN_CORPUS_FILE = 'crs-attack-corpus.json';

export class CorpusError extends Error {}

/** The system's error code (ENOENT, EACCES, …), else the message. */
function reason(e: unknown): string {
  return (e as NodeJS.ErrnoException)?.code ?? (e instanceof Error ? e.message : String(e));
}

export interface LoadedCorpus extends AttackCorpus {
  /** For people: `built-in: OWASP CRS 3.3.4 regression tests`, or `178 ftw files in DIR`. */
  readonly label: string;
}

/**
 * Where the built-in corpus is: beside the bundled CLI (server/out/), or, running from
 * source (server/src/), in the build output server/out/.
 */
export function builtInCorpusPath(): string {
  const candidates = [join(__dirname, BUILT_IN_CORPUS_FILE), join(__dirname, '..', 'out', BUILT_IN_CORPUS_FILE)];
  return candidates.find((p) => existsSync(p)) ?? candidates[0];
}

export function loadBuiltInCorpus(path: string = builtInCorpusPath()): LoadedCorpus {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new CorpusError(`the built-in attack corpus ${path} cannot be read (${reason(e)}): \`npm run build\` generates it`);
  }
  try {
    const corpus = decodeAttackCorpus(text);
    return { ...corpus, label: `built-in: ${corpus.source}` };
  } catch (e) {
    throw new CorpusError(`the built-in attack corpus ${path} is damaged (${e instanceof Error ? e.message : String(e)}): \`npm run build\` writes it again`);
  }
}

/**
 * The attack stages of every .yaml/.yml file under `dir` (in path order). `shown` names the
 * folder in messages. A folder that is missing, holds no YAML or no attack stage is an error.
 */
export function loadCorpusFolder(dir: string, shown: string = dir): LoadedCorpus {
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new CorpusError(`the attack corpus folder ${shown} does not exist`);
    throw new CorpusError(`the attack corpus folder ${shown} cannot be read (${reason(e)})`);
  }
  if (!isDir) throw new CorpusError(`the attack corpus ${shown} is a file, not a folder of ftw YAML files`);
  const paths = yamlFiles(dir);
  if (paths.length === 0) throw new CorpusError(`the attack corpus folder ${shown} holds no .yaml or .yml file (CRS regression tests in the ftw format are expected)`);
  const files = paths.map((p) => ({ path: relative(dir, p), text: readFileSync(p, 'utf8') }));
  const { entries } = attackEntries(files);
  if (entries.length === 0) {
    throw new CorpusError(`the attack corpus folder ${shown} has ${files.length} YAML file${files.length === 1 ? '' : 's'} but no attack: no enabled ftw test stage with log_contains naming a rule id`);
  }
  return { source: `${files.length} ftw file${files.length === 1 ? '' : 's'} in ${shown}`, label: `${files.length} ftw file${files.length === 1 ? '' : 's'} in ${shown}`, entries };
}

/** Every ftw YAML file below `dir`, recursively, in a stable order. */
export function yamlFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yamlFiles(p, out);
    else if (/\.ya?ml$/i.test(name)) out.push(p);
  }
  return out;
}
