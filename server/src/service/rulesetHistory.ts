/**
 * Ruleset versions stored compactly (schema 2, rows laid out for writes since schema 3): a
 * version is a header row plus the rules it holds, and a rule is stored once per change of
 * its content or place, not once per version.
 *
 * - `ruleset_versions (ruleset_id, version, last_updated, name, description)`: one header
 *   per retained version.
 * - `ruleset_rules (ruleset_id, rule_id, pos, hash, body, from_version, to_version)`: rule
 *   `rule_id` was `body` (the rule object as the API returns it: its JSON text, keys in
 *   the API's order; `hash` a digest of it) at sort key `pos` in every version v with
 *   from_version <= v < to_version (to_version NULL: up to the newest).
 *
 * A new version only touches the rules that changed (content or place): a PATCH of one
 * rule closes one row and adds one, O(rule) bytes whatever the ruleset's size. The key is
 * (ruleset_id, from_version, rule_id), so a commit's new key entries land together at the
 * end of their ruleset's (the rows themselves are appended); with the bodies in the rows,
 * a commit of 12 PATCHes writes about 75 KB to the log where schema 2 (bodies in a table
 * of their own, keyed by their digest, so each new body went to a page of its own) wrote
 * about 200 KB, and the log's fsync, which every write waits for, has that much less to
 * flush (a script of those statements; docs/benchmarks.md). Sort keys are reals, so a
 * rule moved or inserted between two others takes a key between theirs and the others
 * keep theirs; only when two keys get too close are the current rules renumbered. Version v's rules are the rows live at v, by `pos`: exactly the bodies that
 * version was written with. A row is kept while a retained version is live in it: deleting
 * a version drops the rows only it used (reopenAt for the newest, dropRowsBetween else).
 *
 * A version may be staged (beginStaging): its rows go in, and the old ones end, over
 * several turns before its header is written. Until then no read sees them: every read of
 * the newest rules is bounded by the newest header's version.
 */
import { performance } from 'node:perf_hooks';
import { sha256 } from './sha256';
import { hiddenSlot } from './hiddenSlot';
import { fixJson, jsonText } from './jsonText';
import type { SqlStore } from './sqlStore';
import { storeCache } from './storeCache';

const RULE_ROWS = `
  CREATE TABLE ruleset_rules (
    ruleset_id TEXT NOT NULL REFERENCES rulesets(id) ON DELETE CASCADE, rule_id TEXT NOT NULL,
    pos REAL NOT NULL, hash TEXT NOT NULL, body TEXT NOT NULL, from_version INTEGER NOT NULL, to_version INTEGER,
    PRIMARY KEY (ruleset_id, from_version, rule_id));
  CREATE INDEX ruleset_rules_live ON ruleset_rules (ruleset_id, to_version, pos);`;

const HISTORY_SCHEMA = `${RULE_ROWS}
  CREATE TABLE ruleset_headers (
    ruleset_id TEXT NOT NULL REFERENCES rulesets(id) ON DELETE CASCADE, version INTEGER NOT NULL,
    last_updated TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL,
    PRIMARY KEY (ruleset_id, version));
`;

/** Rules at most this close get renumbered (a real has 52 bits; halving 40 times is safe). */
const MIN_GAP = 1e-9;
const STEP = 1024;

/** The digest a rule body is stored under: 128 bits of SHA-256, base64url. */
export function bodyHash(body: string): string {
  return sha256(body, 'base64url').slice(0, 22);
}

interface LiveRow {
  rule_id: string;
  hash: string;
  pos: number;
  from_version: number;
}

/**
 * The content hash of rule objects read from or written to the store: a rule a write
 * keeps as it was (the same object) is neither serialized nor hashed again.
 */
const hashes = hiddenSlot<string>('content hash');

/** A rule object read back from body text stored under `hash`. */
export function fromBody(body: string, hash: string): object {
  const rule = JSON.parse(body) as object;
  hashes.set(rule, hash);
  fixJson(rule, body);
  return rule;
}

/** A rule to store: an object with its id (its body is its JSON, the API's key order). */
export interface RuleObject {
  readonly id: string;
}

/**
 * Records version `version` of a ruleset whose rules are `rules` (in order). Call inside
 * a write; the header row is written by the caller. With `staged` (beginStaging: the same
 * ruleset, version and rules), the rows are written already: they are checked, and become
 * the live rows known.
 */
export function writeRules(store: SqlStore, rulesetId: string, version: number, rules: readonly RuleObject[], staged?: StagedVersion): void {
  if (!staged) dropLeftovers(store, rulesetId, version);
  const lives = liveCacheOf(store);
  const cached = lives.get(rulesetId);
  lives.delete(rulesetId);
  const rows = cached?.rows ?? liveRows(store, rulesetId, version);
  const w: Writing = { store, rulesetId, version, rows };
  if (staged) finishStaged(w, staged, rules);
  else if (!(cached && writeOneRule(w, cached.rules, rules))) writeAll(w, rules);
  // Kept only once every statement succeeded (a throw above leaves the rows to be read again).
  if (lives.size >= LIVE_CACHE_SIZE) lives.delete(lives.keys().next().value!);
  lives.set(rulesetId, { rows, rules });
}

/**
 * The rows live at version `version` − 1 (the newest header's, or a deleted one's above
 * it): rows a staging of `version` added begin at it and are left out; rows it closed end
 * at it and are in. `+from_version` keeps SQLite on the live index: with the bound on
 * from_version it took the primary key's range instead, every row of the ruleset's
 * history (a 500-rule PUT's closing statement went from 3 to 13 ms). The same in every
 * read of live rows.
 */
function liveRows(store: SqlStore, rulesetId: string, version: number): Map<string, LiveRow> {
  const found = store.all<LiveRow>(
    `SELECT rule_id, hash, pos, from_version FROM ruleset_rules WHERE ruleset_id = ? AND to_version IS NULL AND +from_version < ?
     UNION ALL SELECT rule_id, hash, pos, from_version FROM ruleset_rules WHERE ruleset_id = ? AND to_version >= ?`,
    [rulesetId, version, rulesetId, version],
  );
  return new Map(found.map((r) => [r.rule_id, r]));
}

/**
 * Per store, the rulesets whose leftovers (dropLeftovers) are known gone: checked once each
 * time the store is opened. A storeCache, so a write that rolls back forgets what it checked.
 */
const cleanOf = storeCache(() => new Map<string, true>());

/**
 * Undoes what a staging of version `version` (or above) that never became a version (a
 * crash between its turns, a failed write) left: its rows go, the rows it closed are
 * live again. No reader saw either (reads are bounded by the newest header's version).
 * Once per ruleset and opening of the store: after that, a staging that fails drops its
 * own (dropStaged), or the ruleset is checked again.
 */
function dropLeftovers(store: SqlStore, rulesetId: string, version: number): void {
  const clean = cleanOf(store);
  if (clean.has(rulesetId)) return;
  store.run('DELETE FROM ruleset_rules WHERE ruleset_id = ? AND from_version >= ?', [rulesetId, version]);
  store.run('UPDATE ruleset_rules SET to_version = NULL WHERE ruleset_id = ? AND to_version >= ?', [rulesetId, version]);
  clean.set(rulesetId, true);
}

/** A version being written: `rows` are the ruleset's live rows, brought up to date as rules are written. */
interface Writing {
  readonly store: SqlStore;
  readonly rulesetId: string;
  readonly version: number;
  readonly rows: Map<string, LiveRow>;
}

/**
 * The write of one rule (a POST or PATCH of a rule): `rules` is the list last written,
 * `before`, with one rule added or one replaced by a new version of itself, every other
 * rule the same object. Only that rule is looked at (a POST into 1,000 rules used to look
 * up all of them); false, with nothing written, for any other change.
 */
function writeOneRule(w: Writing, before: readonly RuleObject[], rules: readonly RuleObject[]): boolean {
  const added = rules.length === before.length + 1;
  if (!added && rules.length !== before.length) return false;
  let p = 0;
  while (p < before.length && rules[p] === before[p]) p++;
  if (p === rules.length) return true;
  let s = 0;
  while (s < before.length - p && rules[rules.length - 1 - s] === before[before.length - 1 - s]) s++;
  if (p + s !== rules.length - 1) return false;
  const r = rules[p]!;
  const old = w.rows.get(r.id);
  if (added ? old !== undefined : before[p]!.id !== r.id || old === undefined) return false;
  let pos = old?.pos;
  if (pos === undefined) {
    const next = rules[p + 1];
    const keys = [...(p > 0 ? [w.rows.get(rules[p - 1]!.id)!.pos] : []), undefined, ...(next ? [w.rows.get(next.id)!.pos] : [])];
    pos = placeAround(keys)?.[p > 0 ? 1 : 0];
    if (pos === undefined) return false;
  }
  writeRule(w, r, pos, old);
  return true;
}

/** Any new list of rules: the longest run of rules still in order keep their sort keys, the others get keys between them. */
function writeAll(w: Writing, rules: readonly RuleObject[]): void {
  const { closing, adding } = planAll(w.rows, rules);
  // Closed before the new rows go in: the statement finds the rows to close by their being live.
  closeRows(w, closing);
  insertRows(w, adding);
  noteAdded(w, adding);
}

/** What writing `rules` over the live rows `rows` takes: the rules whose rows end, and the rows to add. */
function planAll(rows: ReadonlyMap<string, LiveRow>, rules: readonly RuleObject[]): { closing: string[]; adding: NewRow[] } {
  const olds = rules.map((r) => rows.get(r.id));
  const oldKeys = olds.map((o) => o?.pos);
  const keep = keptInOrder(oldKeys);
  const positions = placeAround(oldKeys.map((k, i) => (keep.has(i) ? k : undefined))) ?? rules.map((_, i) => (i + 1) * STEP);
  const closing: string[] = [];
  const adding: NewRow[] = [];
  rules.forEach((r, i) => {
    const row = newRow(r, positions[i]!, olds[i]);
    if (!row) return;
    if (olds[i]) closing.push(r.id);
    adding.push(row);
  });
  if (olds.filter(Boolean).length < rows.size) {
    // Some live rules are not in the new list: their rows end at this version.
    const incoming = new Set(rules.map((r) => r.id));
    for (const id of rows.keys()) if (!incoming.has(id)) closing.push(id);
  }
  return { closing, adding };
}

/**
 * A version whose new rows go in over several turns before the write that makes it
 * current (docs/service.md, "Session 25: staged writes"): a PUT that changed 500 rules
 * spent ~9.5 ms of one turn writing them, and every other request waited. Staged rows
 * begin, and the old rows end, at the version, which has no header yet; every read of a
 * ruleset's newest rules is bounded by its newest header's version, so until the header
 * is written nobody sees either.
 * The ruleset is `staging` meanwhile, and every other write of it is refused (429).
 */
export interface StagedVersion {
  readonly rulesetId: string;
  readonly version: number;
  readonly rules: readonly RuleObject[];
  readonly closing: readonly string[];
  readonly adding: readonly NewRow[];
  /** How many of `adding` are in, and of `closing` closed. */
  inserted: number;
  closed: number;
  /** The store's batchesLost when the staging began. */
  readonly lostBefore: number;
}

/** Rows a change must add before it is staged: below this, one turn writes it all (~1 ms). */
const STAGE_FROM_ROWS = 64;

/** The rulesets whose next version is being staged, per store. */
const stagingOf = new WeakMap<SqlStore, Set<string>>();

/** Whether a write is staging the next version of `rulesetId` (every other write of it must wait). */
export function isStaging(store: SqlStore, rulesetId: string): boolean {
  return stagingOf.get(store)?.has(rulesetId) ?? false;
}

/**
 * Plans version `version` of a ruleset as `rules` and, when it adds at least
 * STAGE_FROM_ROWS rows, marks the ruleset staging and returns the plan (else undefined:
 * write it in one turn). Stage with stageMore(), then writeRules(…, staged) in the write
 * that adds the header; endStaging() in every case after, and dropStaged() if that write
 * did not happen.
 */
export function beginStaging(store: SqlStore, rulesetId: string, version: number, rules: readonly RuleObject[]): StagedVersion | undefined {
  if (isStaging(store, rulesetId)) return undefined;
  const rows = liveCacheOf(store).get(rulesetId)?.rows ?? liveRows(store, rulesetId, version);
  const { closing, adding } = planAll(rows, rules);
  if (adding.length < STAGE_FROM_ROWS) return undefined;
  let set = stagingOf.get(store);
  if (!set) stagingOf.set(store, (set = new Set()));
  set.add(rulesetId);
  return { rulesetId, version, rules, closing, adding, inserted: 0, closed: 0, lostBefore: store.batchesLost };
}

/** Rules whose rows one staged statement closes. */
const CLOSE_BATCH = 64;

/**
 * Stages for up to `budgetMs` (at least one statement); call inside a write. The new
 * rows go in first, then the old ones are closed at the version. True once all is done.
 */
export function stageMore(store: SqlStore, staged: StagedVersion, budgetMs: number): boolean {
  const { rulesetId, version } = staged;
  const w: Writing = { store, rulesetId, version, rows: new Map() };
  if (staged.inserted === 0 && staged.closed === 0) dropLeftovers(store, rulesetId, version);
  const until = performance.now() + budgetMs;
  do {
    if (staged.inserted < staged.adding.length) {
      const next = staged.adding.slice(staged.inserted, staged.inserted + INSERT_SIZES[0]!);
      insertRows(w, next);
      staged.inserted += next.length;
    } else if (staged.closed < staged.closing.length) {
      const next = staged.closing.slice(staged.closed, staged.closed + CLOSE_BATCH);
      const n = store.run('UPDATE ruleset_rules SET to_version = ? WHERE ruleset_id = ? AND to_version IS NULL AND +from_version < ? AND rule_id IN (SELECT value FROM json_each(?))', [version, rulesetId, version, JSON.stringify(next)]);
      if (n !== next.length) throw new Error(`the store's live rows of ruleset ${rulesetId} are not the ones known (${n} of ${next.length} closed)`);
      staged.closed += next.length;
    }
  } while (!stagedAll(staged) && performance.now() < until);
  return stagedAll(staged);
}

function stagedAll(staged: StagedVersion): boolean {
  return staged.inserted === staged.adding.length && staged.closed === staged.closing.length;
}

/** Ends a staging, finished or not: the ruleset may be written again. */
export function endStaging(store: SqlStore, staged: StagedVersion): void {
  stagingOf.get(store)?.delete(staged.rulesetId);
}

/**
 * Undoes a staging that did not become a version (its write refused or failed); call
 * inside a write. Nobody read what it staged meanwhile. Should this write not happen (a
 * store that takes no writes), the ruleset's next write undoes it first.
 */
export function dropStaged(store: SqlStore, staged: StagedVersion): void {
  cleanOf(store).delete(staged.rulesetId);
  dropLeftovers(store, staged.rulesetId, staged.version);
}

/** The write that makes a staged version current: its header (the caller's) shows the rows it staged; the live rows known become them. */
function finishStaged(w: Writing, staged: StagedVersion, rules: readonly RuleObject[]): void {
  if (staged.rulesetId !== w.rulesetId || staged.version !== w.version || staged.rules !== rules || !stagedAll(staged)) {
    throw new Error(`staged rows of ruleset ${staged.rulesetId} version ${staged.version} do not match the version written (${w.rulesetId} version ${w.version})`);
  }
  const { store, rulesetId, version } = w;
  // A batch lost since the staging began (its transaction rolled back: an I/O error, a full
  // disk) may have taken a slice with it, or brought back what a slice had undone (rows a
  // failed staging of this version left): the rows at the version are then not known to be
  // these. Refused; the route undoes the staging.
  if (store.batchesLost !== staged.lostBefore) {
    throw new Error(`the store lost a transaction while version ${version} of ruleset ${rulesetId} was staged: the write is refused rather than stored with rows it may not hold; send it again`);
  }
  // And the counts, which no lost batch should have changed.
  const added = store.get<{ n: number }>('SELECT COUNT(*) AS n FROM ruleset_rules WHERE ruleset_id = ? AND from_version = ?', [rulesetId, version])!.n;
  const closed = store.get<{ n: number }>('SELECT COUNT(*) AS n FROM ruleset_rules WHERE ruleset_id = ? AND to_version = ?', [rulesetId, version])!.n;
  if (added !== staged.adding.length || closed !== staged.closing.length) {
    throw new Error(`the store holds ${added} of the ${staged.adding.length} rows and ${closed} of the ${staged.closing.length} ends staged for ruleset ${rulesetId} version ${version}: the write is refused, not stored with rules missing`);
  }
  for (const id of staged.closing) w.rows.delete(id);
  noteAdded(w, staged.adding);
}

/** A rule's row to add: its id, sort key, content hash and body. */
export interface NewRow {
  readonly id: string;
  readonly pos: number;
  readonly hash: string;
  readonly body: string;
}

/** Rule `r`'s new row at sort key `pos`, or undefined when its live row `old` already holds it there. */
function newRow(r: RuleObject, pos: number, old: LiveRow | undefined): NewRow | undefined {
  const hash = makeBody(r);
  if (old && old.hash === hash && old.pos === pos) return undefined;
  return { id: r.id, pos, hash, body: jsonText(r) };
}

/**
 * Makes rule `r`'s body (its JSON) and content hash, unless they are made already, and
 * returns the hash. A route makes them for a large write in turns before the one that
 * writes (inSlices), so that turn holds the event loop less.
 */
export function makeBody(r: RuleObject): string {
  let hash = hashes.get(r);
  if (hash === undefined) {
    const body = JSON.stringify(r);
    hash = bodyHash(body);
    hashes.set(r, hash);
    fixJson(r, body);
  }
  return hash;
}

/** Rule `r` at sort key `pos` in the version written; `old` its live row, if it had one. */
function writeRule(w: Writing, r: RuleObject, pos: number, old: LiveRow | undefined): void {
  const row = newRow(r, pos, old);
  if (!row) return;
  if (old) closeRows(w, [r.id]);
  insertRows(w, [row]);
  noteAdded(w, [row]);
}

/**
 * Ends the live rows of rules `ids` at the version written. Many end in one statement
 * that walks the ruleset's live rows: a PUT that changed 500 rules spent 5 ms of the
 * event loop on 500 updates by key (docs/service.md "Session 24").
 */
function closeRows(w: Writing, ids: readonly string[]): void {
  if (ids.length === 0) return;
  const { store, rulesetId, version, rows } = w;
  const closed =
    ids.length === 1
      ? // By its primary key: the live index would scan the ruleset's rows.
        store.run('UPDATE ruleset_rules SET to_version = ? WHERE ruleset_id = ? AND rule_id = ? AND from_version = ?', [version, rulesetId, ids[0]!, rows.get(ids[0]!)!.from_version])
      : store.run('UPDATE ruleset_rules SET to_version = ? WHERE ruleset_id = ? AND to_version IS NULL AND +from_version < ? AND rule_id IN (SELECT value FROM json_each(?))', [version, rulesetId, version, JSON.stringify(ids)]);
  // The live rows known here and the table's disagree: undo the write rather than store a wrong version.
  if (closed !== ids.length) throw new Error(`the store's live rows of ruleset ${rulesetId} are not the ones known (${closed} of ${ids.length} closed)`);
  for (const id of ids) rows.delete(id);
}

/** Rows per INSERT, largest first: a statement of many rows is one trip into SQLite, not one per row. */
const INSERT_SIZES = [32, 8, 1];
const insertSql = new Map(INSERT_SIZES.map((n) => [n, `INSERT INTO ruleset_rules (ruleset_id, rule_id, pos, hash, body, from_version, to_version) VALUES ${Array<string>(n).fill('(?, ?, ?, ?, ?, ?, NULL)').join(', ')}`]));

/** Inserts `adding` as rows live from the version written. */
function insertRows(w: Writing, adding: readonly NewRow[]): void {
  const { store, rulesetId, version } = w;
  let i = 0;
  for (const n of INSERT_SIZES) {
    for (; i + n <= adding.length; i += n) {
      const params: (string | number)[] = [];
      for (let k = i; k < i + n; k++) {
        const r = adding[k]!;
        params.push(rulesetId, r.id, r.pos, r.hash, r.body, version);
      }
      store.run(insertSql.get(n)!, params);
    }
  }
}

/** The rows `adding` are live from the version written: the live rows known say so. */
function noteAdded(w: Writing, adding: readonly NewRow[]): void {
  for (const r of adding) w.rows.set(r.id, { rule_id: r.id, hash: r.hash, pos: r.pos, from_version: w.version });
}

/**
 * The live rows of recently written rulesets, as writeRules left them, with the rules
 * written: the next write of one rule compares against these instead of reading the
 * ruleset's rows again, and finds the rule it changed by comparing the lists' objects.
 */
const LIVE_CACHE_SIZE = 512;
const liveCacheOf = storeCache(() => new Map<string, { readonly rows: Map<string, LiveRow>; readonly rules: readonly RuleObject[] }>());

/** Forgets the cached live rows of a ruleset (its rows were changed other than by writeRules). */
export function forgetLiveRows(store: SqlStore, rulesetId: string): void {
  liveCacheOf(store).delete(rulesetId);
}

/**
 * Which of the rules keep their sort key: the longest run of old keys that is still in
 * increasing order in the new list (a patience-sort LIS), so a move re-keys one rule.
 */
function keptInOrder(old: readonly (number | undefined)[]): Set<number> {
  const tails: number[] = [];
  const prev = new Array<number>(old.length).fill(-1);
  old.forEach((p, i) => {
    if (p === undefined) return;
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (old[tails[mid]!]! < p) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[i] = tails[lo - 1]!;
    tails[lo] = i;
  });
  const out = new Set<number>();
  for (let i = tails.length ? tails[tails.length - 1]! : -1; i >= 0; i = prev[i]!) out.add(i);
  return out;
}

/** Keys for the rules without one, between their kept neighbours'; undefined when they do not fit. */
function placeAround(keys: readonly (number | undefined)[]): number[] | undefined {
  const out: number[] = [];
  let i = 0;
  while (i < keys.length) {
    if (keys[i] !== undefined) {
      out.push(keys[i]!);
      i++;
      continue;
    }
    let j = i;
    while (j < keys.length && keys[j] === undefined) j++;
    const lo = i > 0 ? out[i - 1]! : (keys[j] ?? STEP) - STEP * (j - i + 1);
    const hi = j < keys.length ? keys[j]! : lo + STEP * (j - i + 1);
    const gap = (hi - lo) / (j - i + 1);
    if (!(gap > MIN_GAP)) return undefined;
    for (let k = i; k < j; k++) out.push(lo + gap * (k - i + 1));
    i = j;
  }
  return out;
}

/**
 * The rules of version `version`, in order; `newest` when it is the ruleset's newest
 * header (its rows are the live ones, found by the live index, less any staged after it).
 */
export function readRules(store: SqlStore, rulesetId: string, version: number, newest = false): object[] {
  const rows = newest
    ? store.all<{ body: string; hash: string }>(
        // The live rows less those a staging added, and the rows a staging closed (liveRows).
        `SELECT body, hash, pos FROM ruleset_rules WHERE ruleset_id = ? AND to_version IS NULL AND +from_version <= ?
         UNION ALL SELECT body, hash, pos FROM ruleset_rules WHERE ruleset_id = ? AND to_version > ? ORDER BY pos`,
        [rulesetId, version, rulesetId, version],
      )
    : store.all<{ body: string; hash: string }>(
        `SELECT body, hash FROM ruleset_rules
          WHERE ruleset_id = ? AND from_version <= ? AND (to_version IS NULL OR to_version > ?) ORDER BY pos`,
        [rulesetId, version, version],
      );
  return rows.map((r) => fromBody(r.body, r.hash));
}

/**
 * After the newest retained versions were deleted, makes the live rows those of `newest`
 * (the newest version left): rows only later versions had go, rows closed after it reopen.
 */
export function reopenAt(store: SqlStore, rulesetId: string, newest: number): void {
  forgetLiveRows(store, rulesetId);
  store.run('DELETE FROM ruleset_rules WHERE ruleset_id = ? AND from_version > ?', [rulesetId, newest]);
  store.run('UPDATE ruleset_rules SET to_version = NULL WHERE ruleset_id = ? AND to_version > ?', [rulesetId, newest]);
}

/**
 * After a version between `before` and `after` was deleted (both retained, `before`
 * undefined when none is older), drops the rows no retained version needs any more. A row
 * is needed while a retained version v falls in its span (from_version <= v <
 * to_version), and no retained version lies strictly between the two: so the rows whose
 * whole span does (from_version > before, to_version <= after) go, the deleted version's
 * own and any an older deletion left there. Live rows (to_version NULL) are `after`'s and
 * stay. The key's from_version bounds the scan to the rows begun in that gap.
 */
export function dropRowsBetween(store: SqlStore, rulesetId: string, before: number | undefined, after: number): void {
  store.run('DELETE FROM ruleset_rules WHERE ruleset_id = ? AND from_version > ? AND from_version < ? AND to_version <= ?', [rulesetId, before ?? 0, after, after]);
}

/** Versions read at a time by the schema 1 → 2 step. */
export const MIGRATION_PAGE = 200;

/**
 * Schema 1 → 2: every retained version's body (one JSON document per version) replayed
 * into rule rows and headers, oldest first, then the old table dropped.
 */
export function migrateToRuleRows(store: SqlStore): void {
  store.run('ALTER TABLE ruleset_versions RENAME TO ruleset_versions_v1');
  store.exec(HISTORY_SCHEMA);
  store.run('ALTER TABLE ruleset_headers RENAME TO ruleset_versions');
  // A page of versions at a time: a store's whole history (each version a whole ruleset in schema 1) need not fit in memory.
  for (let after: [string, number] = ['', -1]; ; ) {
    const page = store.all<{ ruleset_id: string; version: number; last_updated: string; body: string }>(
      'SELECT ruleset_id, version, last_updated, body FROM ruleset_versions_v1 WHERE (ruleset_id, version) > (?, ?) ORDER BY ruleset_id, version LIMIT ?',
      [...after, MIGRATION_PAGE],
    );
    for (const v of page) {
      const rs = JSON.parse(v.body) as { name: string; description: string; rules: { id: string }[] };
      writeRules(store, v.ruleset_id, v.version, rs.rules);
      store.run('INSERT INTO ruleset_versions (ruleset_id, version, last_updated, name, description) VALUES (?, ?, ?, ?, ?)', [v.ruleset_id, v.version, v.last_updated, rs.name, rs.description]);
    }
    if (page.length < MIGRATION_PAGE) break;
    const last = page[page.length - 1]!;
    after = [last.ruleset_id, last.version];
  }
  store.run('DROP TABLE ruleset_versions_v1');
}

/**
 * Schema 2 → 3: each rule row takes its body (schema 2 kept bodies in `rule_bodies`, keyed
 * by digest) and is keyed by (ruleset, from_version, rule), so a commit's new rows are
 * written together (see the file's comment). A store that came from schema 1 in the same
 * opening already has the rows of schema 3 (step 2 writes what this code writes).
 */
export function inlineRuleBodies(store: SqlStore): void {
  if (store.get("SELECT 1 AS y FROM sqlite_master WHERE type = 'table' AND name = 'rule_bodies'") === undefined) return;
  store.run('ALTER TABLE ruleset_rules RENAME TO ruleset_rules_v2');
  store.run('DROP INDEX ruleset_rules_live');
  store.exec(RULE_ROWS);
  // A row whose body is missing fails `body NOT NULL`: the step rolls back, saying so, rather than drop the rule.
  store.run(`INSERT INTO ruleset_rules (ruleset_id, rule_id, pos, hash, body, from_version, to_version)
    SELECT r.ruleset_id, r.rule_id, r.pos, r.hash, b.body, r.from_version, r.to_version FROM ruleset_rules_v2 r LEFT JOIN rule_bodies b ON b.hash = r.hash`);
  store.run('DROP TABLE ruleset_rules_v2');
  store.run('DROP TABLE rule_bodies');
}
