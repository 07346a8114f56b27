/**
 * The JSON of objects that never change once made (a stored rule, a version of a
 * ruleset): serialized once, however often it is answered or written. A rule keeps its
 * text; a ruleset keeps its UTF-8 bytes (joinedJson), and an answer sends those bytes as
 * they are (api.ts envelopeChunks). A new version of a ruleset copies the byte runs of the
 * rules it shares with the version before it, in order, and writes only the texts of the
 * rules that changed: a PATCH of one rule in a 500-rule ruleset serializes one rule and
 * copies the rest as two runs, with no 150 KB string made, encoded and collected.
 */
import { hiddenSlot } from './hiddenSlot';

/** A list's JSON as joinedJson wrote it: the items, the bytes, and where each item's text starts and ends in them. */
export interface Joined {
  readonly items: readonly unknown[];
  readonly bytes: Buffer;
  /** Item i's text is bytes[spans[2i], spans[2i+1]). */
  readonly spans: Int32Array;
}

type Fixed = string | Joined | (() => Joined);

/** Where a fixed object keeps its JSON (hiddenSlot.ts says why not a WeakMap). */
const fixed = hiddenSlot<Fixed>('fixed JSON');

/** Marks `v` as never changing from now on: its JSON is `json`, or what `json()` makes when first asked. */
export function fixJson(v: object, json: string | (() => Joined)): void {
  fixed.set(v, json);
}

/** Whether `v` was marked with fixJson (its JSON never changes). */
export function isFixed(v: unknown): v is object {
  return fixed.get(v) !== undefined;
}

/** `JSON.stringify(v)`, from the cache when `v` was fixed with its text (a rule; a ruleset keeps bytes, not text). */
export function jsonText(v: unknown): string {
  const t = fixed.get(v);
  return typeof t === 'string' ? t : JSON.stringify(v);
}

/** `JSON.stringify(v)` as UTF-8 bytes; those of an object fixed with a maker are made once and kept. */
export function jsonBytes(v: unknown): Buffer {
  const t = fixed.get(v);
  if (t === undefined || typeof t === 'string') return Buffer.from(t ?? JSON.stringify(v));
  return made(v as object, t).bytes;
}

/** The list JSON of `v` if it was made already (fixed with a maker, and asked for since), else undefined. */
export function madeJoined(v: object): Joined | undefined {
  const t = fixed.get(v);
  return t !== undefined && typeof t === 'object' ? t : undefined;
}

function made(v: object, t: Joined | (() => Joined)): Joined {
  if (typeof t !== 'function') return t;
  const j = t();
  fixed.set(v, j);
  return j;
}

/** A run of `base`'s bytes to copy (items from..to-1), or the text of one item to write. */
type Piece = { readonly from: number; to: number } | { readonly text: string };

/**
 * `head`, then the JSON of `items` separated by commas, then `tail`, as UTF-8 in one
 * buffer (no joined string). Items that stand in `base` (the list before this change) in
 * the same order are copied from its bytes as runs; the walk recognizes an item inserted,
 * deleted or replaced at a time, and anything else is written from the items' texts.
 */
export function joinedJson(head: string, items: readonly unknown[], tail: string, base?: Joined): Joined {
  const pieces: Piece[] = [];
  const old = base?.items ?? [];
  let j = 0;
  for (let i = 0; i < items.length; ) {
    const item = items[i];
    if (j < old.length && item === old[j]) {
      const last = pieces[pieces.length - 1];
      if (last && 'from' in last && last.to === j) last.to = j + 1;
      else pieces.push({ from: j, to: j + 1 });
      i++;
      j++;
    } else if (j + 1 < old.length && item === old[j + 1]) {
      j++; // old[j] was deleted
    } else {
      pieces.push({ text: jsonText(item) });
      // Inserted when the next item is the old one here; otherwise it replaced it.
      if (!(i + 1 < items.length && items[i + 1] === old[j])) j++;
      i++;
    }
  }
  // A comma between pieces; a run's own commas are in its bytes.
  let size = Buffer.byteLength(head) + Buffer.byteLength(tail) + Math.max(0, pieces.length - 1);
  for (const p of pieces) size += 'text' in p ? Buffer.byteLength(p.text) : base!.spans[2 * p.to - 1]! - base!.spans[2 * p.from]!;
  // Not from Node's shared pool: a small ruleset's bytes would keep a whole 8 KiB slab alive.
  const bytes = Buffer.allocUnsafeSlow(size);
  const spans = new Int32Array(2 * items.length);
  let at = bytes.write(head, 0);
  let n = 0;
  for (const p of pieces) {
    if (n > 0) bytes[at++] = 0x2c; // ,
    if ('text' in p) {
      spans[2 * n] = at;
      at += bytes.write(p.text, at);
      spans[2 * n + 1] = at;
      n++;
      continue;
    }
    // A run keeps its inner commas; its items' spans move by the run's shift.
    const start = base!.spans[2 * p.from]!;
    const shift = at - start;
    for (let k = p.from; k < p.to; k++, n++) {
      spans[2 * n] = base!.spans[2 * k]! + shift;
      spans[2 * n + 1] = base!.spans[2 * k + 1]! + shift;
    }
    at += base!.bytes.copy(bytes, at, start, base!.spans[2 * p.to - 1]!);
  }
  bytes.write(tail, at);
  return { items, bytes, spans };
}
