// The paranoia preview's computation, without `vscode`: read the attack corpus (ftw YAML,
// recursively, sampled evenly), parse the workspace's .http texts, and run the core's
// previewParanoia for each set. Runs in a worker thread (previewWorker.ts) so that the
// extension host stays responsive; in-process when the worker is not built.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { FieldValues } from '../../server/src/language/evaluate';
import { defaultCatalog } from '../../server/src/managed/catalog';
import { previewParanoia, type ParanoiaPreview } from '../../server/src/managed/preview';
import { requestValues } from '../../server/src/requests/fields';
import { parseFtwFile } from '../../server/src/requests/ftw';
import { parseHttpFile } from '../../server/src/requests/http';
import type { SampleRequest } from '../../server/src/requests/types';
import type { Rule } from '../../server/src/rulesets/model';

export interface PreviewInput {
  readonly execute: Rule;
  readonly thresholds: readonly number[];
  /** Folder of ftw YAML files (searched recursively), if any. */
  readonly corpusDir?: string;
  readonly corpusLabel?: string;
  readonly maxCorpusRequests: number;
  /** The workspace's .http files' texts. */
  readonly httpTexts: readonly string[];
}

export interface PreviewSet {
  readonly name: 'Attacks' | 'Your requests';
  readonly source: string;
  readonly total: number;
  /** Requests available before sampling. */
  readonly available: number;
  readonly preview?: ParanoiaPreview;
}

function corpusFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) corpusFiles(p, out);
    else if (/\.ya?ml$/i.test(name)) out.push(p);
  }
  return out;
}

/** Every n-th item so that at most `max` remain, spread over the whole list. */
export function sample<T>(xs: readonly T[], max: number): T[] {
  if (xs.length <= max) return [...xs];
  const step = xs.length / max;
  return Array.from({ length: max }, (_, i) => xs[Math.floor(i * step)]);
}

export function computePreview(input: PreviewInput, progress: (message: string) => void = () => undefined): PreviewSet[] {
  const target = { execute: input.execute, catalog: defaultCatalog };
  const sets: PreviewSet[] = [];
  if (input.corpusDir) {
    progress('reading the attack corpus…');
    let files: string[] | undefined;
    try {
      files = corpusFiles(input.corpusDir);
    } catch (e) {
      sets.push({ name: 'Attacks', source: `${input.corpusLabel ?? input.corpusDir} could not be read (${e instanceof Error ? e.message : String(e)}; rulesmith.preview.attackCorpus)`, total: 0, available: 0 });
    }
    if (files) {
      const all: SampleRequest[] = [];
      for (const f of files) {
        for (const t of parseFtwFile(readFileSync(f, 'utf8')).tests) {
          if (t.enabled === false) continue;
          for (const s of t.stages) if (!s.rejected) all.push(s.request);
        }
      }
      const fields: FieldValues[] = sample(all, Math.max(1, input.maxCorpusRequests)).map((r) => requestValues(r).values);
      progress(`evaluating ${fields.length} attack requests at 4 levels…`);
      const preview = fields.length > 0 ? previewParanoia(target, fields, input.thresholds) : undefined;
      sets.push({ name: 'Attacks', source: `${files.length} ftw files in ${input.corpusLabel ?? input.corpusDir}`, total: fields.length, available: all.length, ...(preview ? { preview } : {}) });
    }
  }
  progress('evaluating the workspace .http requests…');
  const own: FieldValues[] = [];
  for (const text of input.httpTexts) for (const req of parseHttpFile(text).requests) own.push(requestValues(req).values);
  const preview = own.length > 0 ? previewParanoia(target, own, input.thresholds) : undefined;
  sets.push({ name: 'Your requests', source: `${input.httpTexts.length} .http file${input.httpTexts.length === 1 ? '' : 's'} in the workspace`, total: own.length, available: own.length, ...(preview ? { preview } : {}) });
  return sets;
}
