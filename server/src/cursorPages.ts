/**
 * Every item of a cursor-based list of the rules API (the ruleset lists): the loop the
 * extension's client (client/src/api/rulesApi.ts) and the CLI's Terraform export
 * (cli/terraform.ts) both walk, each with its own reads and its own errors. No I/O here.
 */

/** Where a page's `result_info` may say the next page's cursor (rulesApi.ts CursorInfo; anything, as a server sent it). */
export interface CursorInfo {
  readonly cursor?: unknown;
  readonly cursors?: { readonly after?: unknown };
}

/** Why a list could not be read to its end: longer than the pages allowed, or a cursor that came back. */
export type CursorFailure = { readonly tooLong: number } | { readonly repeated: string };

/** The next page's cursor, in either place the API has put it (`cursor`, what the SDK reads; `cursors.after`, what the schema says). */
function nextCursor(info: CursorInfo | undefined): string | undefined {
  if (typeof info?.cursor === 'string' && info.cursor) return info.cursor;
  return typeof info?.cursors?.after === 'string' && info.cursors.after ? info.cursors.after : undefined;
}

/**
 * Reads pages with `page(cursor)` (none for the first) until one gives no next cursor or no
 * items. More than `maxPages` pages, or a cursor that comes back, is thrown as `fail(why)`:
 * never a list cut short, never a loop on a server that does not end it.
 */
export async function everyPage<T>(
  page: (cursor: string | undefined) => Promise<{ readonly items: readonly T[]; readonly info?: CursorInfo }>,
  fail: (why: CursorFailure) => Error,
  maxPages: number,
): Promise<T[]> {
  const out: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let n = 0; ; n++) {
    if (n >= maxPages) throw fail({ tooLong: maxPages });
    const { items, info } = await page(cursor);
    out.push(...items);
    const next = nextCursor(info);
    if (next === undefined || items.length === 0) return out;
    if (seen.has(next)) throw fail({ repeated: next });
    seen.add(next);
    cursor = next;
  }
}
