// The paranoia preview's computation, without `vscode`: load the attack corpus (the
// built-in one, or the folder of the rulesmith.preview.attackCorpus setting), sample it
// evenly, parse the workspace's .http texts, and run the core's previewParanoia for each
// set. Runs in a worker thread (worker.ts) so that the extension host stays responsive;
// in-process when the worker is not built.
import type { FieldValues } from '../../../server/src/language/evaluate';
import { CorpusError, loadBuiltInCorpus, loadCorpusFolder, type LoadedCorpus } from '../../../server/src/corpusFiles';
import { defaultCatalog } from '../../../server/src/managed/catalog';
import { previewParanoia, type ParanoiaPreview } from '../../../server/src/managed/preview';
import { sampleEvenly } from '../../../server/src/requests/attackCorpus';
import { requestValues } from '../../../server/src/requests/fields';
import { parseHttpFile } from '../../../server/src/requests/http';
import type { Rule } from '../../../server/src/rulesets/model';

/** The built-in corpus file, or the setting's folder (absolute, and as the user wrote it). */
export type CorpusChoice = { readonly builtIn: string } | { readonly folder: string; readonly label: string };

export interface PreviewInput {
  readonly execute: Rule;
  readonly thresholds: readonly number[];
  readonly corpus: CorpusChoice;
  readonly maxCorpusRequests: number;
  /** The workspace's .http files' texts. */
  readonly httpTexts: readonly string[];
}

export interface PreviewSet {
  readonly name: 'Attacks' | 'Your requests';
  /** Where the requests come from, for people. */
  readonly source: string;
  readonly total: number;
  /** Requests available before sampling. */
  readonly available: number;
  /** Attacks from the built-in corpus (not the setting's folder). */
  readonly builtIn?: boolean;
  /** Why the set could not be computed (an unusable corpus folder), when it could not. */
  readonly error?: string;
  readonly preview?: ParanoiaPreview;
}

export function computePreview(input: PreviewInput, progress: (message: string) => void = () => undefined): PreviewSet[] {
  const target = { execute: input.execute, catalog: defaultCatalog };
  const sets: PreviewSet[] = [];
  progress('reading the attack corpus…');
  let corpus: LoadedCorpus | undefined;
  try {
    corpus = 'builtIn' in input.corpus ? loadBuiltInCorpus(input.corpus.builtIn) : loadCorpusFolder(input.corpus.folder, input.corpus.label);
  } catch (e) {
    if (!(e instanceof CorpusError)) throw e;
    const builtIn = 'builtIn' in input.corpus;
    sets.push({ name: 'Attacks', source: builtIn ? 'the built-in corpus' : input.corpus.label, total: 0, available: 0, builtIn, error: e.message });
  }
  if (corpus) {
    const fields: FieldValues[] = sampleEvenly(corpus.entries, Math.max(1, input.maxCorpusRequests)).map((e) => requestValues(e.request).values);
    progress(`evaluating ${fields.length} attack requests at 4 levels…`);
    const preview = previewParanoia(target, fields, input.thresholds);
    sets.push({ name: 'Attacks', source: corpus.label, total: fields.length, available: corpus.entries.length, builtIn: 'builtIn' in input.corpus, preview });
  }
  progress('evaluating the workspace .http requests…');
  const own: FieldValues[] = [];
  for (const text of input.httpTexts) for (const req of parseHttpFile(text).requests) own.push(requestValues(req).values);
  const preview = own.length > 0 ? previewParanoia(target, own, input.thresholds) : undefined;
  sets.push({ name: 'Your requests', source: `${input.httpTexts.length} .http file${input.httpTexts.length === 1 ? '' : 's'} in the workspace`, total: own.length, available: own.length, ...(preview ? { preview } : {}) });
  return sets;
}
