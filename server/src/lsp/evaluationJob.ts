/**
 * The work of "Evaluate" that can take long, without I/O: compiling a zone from its file
 * texts (cached) and evaluating requests against it, or tracing one. The language server
 * sends it to the evaluation worker thread (evaluationWorker.ts) with a time limit
 * (timedWorker.ts); the files are read on the server's thread (evaluate.ts).
 *
 * Progress reports, one before and one after each request, restart the limit: a file of
 * many requests gives each its own, and the server knows which request was stopped and
 * keeps the verdicts of those before it.
 */
import type { Plan } from '../language/scheme/types';
import type { Verdict } from '../protocol';
import { defaultCatalog } from '../managed/catalog';
import { checkZone, loadZoneFiles, rulesetNames, ZoneFileError, type CheckedZone } from '../rulesets/zoneFile';
import { slowForTests } from '../timedWorker';
import type { TraceViewOptions } from '../rulesets/traceView';
import { verdictOf, traceMarkdown } from './evaluationTrace';
import { requestBlocks } from './httpBlocks';

/** A zone as files: `[name as shown, text]` of the entry points and of the custom rulesets. */
export interface ZoneTexts {
  readonly entries: readonly (readonly [string, string])[];
  readonly customs: readonly (readonly [string, string])[];
  readonly plan?: Plan;
}

export type EvaluationJob = {
  readonly zone: ZoneTexts;
  readonly httpText: string;
  /** Bytes of each body that become field values (setting rulesmith.evaluation.bodyLimit); default 128 KiB. */
  readonly bodyLimit?: number;
} & (
  | { readonly kind: 'evaluate'; /** Only this request; every request when absent. */ readonly index?: number }
  | { readonly kind: 'trace'; readonly index: number; readonly title: string; readonly where: string; readonly ruleset: string; readonly view?: TraceViewOptions }
);

/** Why the zone cannot be evaluated: a sentence, the first errors, and where the first one is. */
export interface ZoneProblem {
  readonly message: string;
  readonly details: readonly string[];
  /** The file (its name as shown) of the first error, and the 0-based position when known. */
  readonly file?: string;
  readonly line?: number;
  readonly character?: number;
}

export type EvaluationReply =
  | { readonly zoneProblem: ZoneProblem }
  | { readonly verdicts: readonly (readonly [number, Verdict])[] }
  | { readonly markdown: string; readonly verdict: Verdict }
  | { readonly crash: string };

/** Before a request is evaluated (`start`), and after, with its verdict (`done`). */
export type EvaluationProgress = { readonly start: number } | { readonly done: number; readonly verdict: Verdict };

interface Prepared {
  readonly checked?: CheckedZone;
  readonly names?: ReadonlyMap<string, string>;
  readonly problem?: ZoneProblem;
}

/** How many compiled zones are kept (one per set of ruleset texts). */
const ZONE_CACHE_SIZE = 8;
/** How many errors a problem carries. */
const MAX_DETAILS = 5;
const zones = new Map<string, Prepared>();

function compile(zone: ZoneTexts): Prepared {
  const { entries, customs, plan } = zone;
  const texts = new Map<string, string>([...entries, ...customs]);
  const shown = entries.map(([n]) => n).join(' + ');
  let loaded;
  try {
    loaded = loadZoneFiles(
      entries.map(([n]) => n),
      customs.map(([n]) => n),
      (f) => texts.get(f) ?? '',
      { catalog: defaultCatalog },
    );
  } catch (e) {
    if (!(e instanceof ZoneFileError)) throw e;
    // The message starts with the file's name.
    const file = [...texts.keys()].find((n) => e.message.startsWith(n)) ?? entries[0][0];
    return { problem: { message: `The ruleset ${shown} cannot be used.`, details: [e.message], file } };
  }
  if (loaded.zone.plan === undefined && plan !== undefined) loaded = { ...loaded, zone: { ...loaded.zone, plan } };
  const checked = checkZone(loaded);
  if (checked.errors.length > 0) {
    const n = checked.errors.length;
    const first = checked.errors[0];
    return {
      problem: {
        message: `The ruleset ${shown} has ${n} error${n === 1 ? '' : 's'}: fix ${n === 1 ? 'it' : 'them'} to evaluate requests.`,
        details: checked.errors.slice(0, MAX_DETAILS).map((e) => e.message),
        file: first.file ?? entries[0][0],
        ...(first.line !== undefined ? { line: first.line, character: first.character ?? 0 } : {}),
      },
    };
  }
  return { checked, names: rulesetNames(loaded.zone) };
}

/** The zone compiled, from the cache while its texts are the same. */
function prepared(zone: ZoneTexts): Prepared {
  const key = [zone.plan ?? '', ...zone.entries.flat(), '', ...zone.customs.flat()].join('\u0000');
  const hit = zones.get(key);
  if (hit) {
    zones.delete(key);
    zones.set(key, hit);
    return hit;
  }
  const p = compile(zone);
  zones.set(key, p);
  if (zones.size > ZONE_CACHE_SIZE) zones.delete(zones.keys().next().value as string);
  return p;
}

/** One job's answer (plain data, as the worker posts it). */
export function evaluationReply(job: EvaluationJob, progress: (p: EvaluationProgress) => void = () => undefined): EvaluationReply {
  try {
    const zone = prepared(job.zone);
    if (zone.problem) return { zoneProblem: zone.problem };
    const checked = zone.checked!;
    const names = zone.names!;
    const blocks = requestBlocks(job.httpText, job.bodyLimit);
    if (job.kind === 'trace') {
      const block = blocks.find((b) => b.index === job.index);
      if (!block?.values) return { crash: `request ${job.index + 1} has no field values` };
      progress({ start: block.index });
      slowForTests(block.index);
      const evaluation = checked.compiled.evaluate(block.values);
      const verdict = verdictOf(evaluation, names);
      const markdown = traceMarkdown({ title: job.title, summary: block.summary, where: job.where, ruleset: job.ruleset, fields: block.fields ?? {}, evaluation, verdict, names, ...(job.view ? { view: job.view } : {}) });
      return { markdown, verdict };
    }
    const verdicts: [number, Verdict][] = [];
    for (const b of blocks) {
      if ((job.index !== undefined && b.index !== job.index) || b.problems.length > 0 || !b.values) continue;
      progress({ start: b.index });
      slowForTests(b.index);
      const verdict = verdictOf(checked.compiled.evaluate(b.values), names);
      verdicts.push([b.index, verdict]);
      progress({ done: b.index, verdict });
    }
    return { verdicts };
  } catch (e) {
    return { crash: e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e) };
  }
}
