/**
 * Rulesets in the store, and the functions other parts of the service share (the
 * migration flow, the demo seed, trace and zone configuration).
 *
 * Storage contract (others rely on it):
 * - `rulesets`: one row per ruleset, of what never changes (id, scope 'account'|'zone',
 *   scope_id, kind, phase) and `version_floor`, the newest version number deleted (from
 *   before schema 4: the newest given until then): new
 *   versions are numbered above it and above every retained one, so a number is never
 *   given twice. A write adds a version without touching this row (schema 4).
 *   At most one entry point (kind root/zone) per scope and phase (a unique index).
 * - Versions (rulesetHistory.ts): a header per version in `ruleset_versions` and the
 *   rules as rows keyed by content; read back they give the whole ruleset object exactly
 *   as `GET …/rulesets/{id}` returned it for that version: `{id, name, description,
 *   kind, version, last_updated, phase, rules}` where every rule is `{id, version, action, action_parameters?,
 *   expression, description, last_updated, ref, enabled, logging?,
 *   exposed_credential_check?, ratelimit?}` (ids 32-hex, versions digit strings,
 *   timestamps with microseconds). The current version of a ruleset is its newest
 *   retained version row.
 * - Managed rulesets are not stored: they come from the catalog (server/src/managed/).
 *
 * Nothing here validates expressions or action parameters: the routes do that with the
 * core before they call `saveRuleset`; the seed and the migration flow pass rules they
 * built themselves. What is enforced here is what the store must never hold: duplicate
 * rule ids or refs in one version.
 */
import type { Phase } from '../language/scheme/types';
import { SizedLru } from '../language/sizedLru';
import { defaultCatalog } from '../managed/catalog';
import { rulesetVersion, type ManagedCatalog, type ManagedRuleset, type ManagedRulesetVersion } from '../rulesets/catalog';
import type { RulesetKind } from '../rulesets/model';
import type { RulesetHeader as WireRulesetHeader } from '../rulesApi';
import { ApiError, CODES, ID, newId, timestamp } from './api';
import { beginStaging, dropRowsBetween, dropStaged, endStaging, forgetLiveRows, isStaging, readRules, reopenAt, stageMore, writeRules, type StagedVersion } from './rulesetHistory';
import { storeScope } from './scope';
import { fixJson, joinedJson, jsonBytes, madeJoined, type Joined } from './jsonText';
import type { Store } from './store';
import { storeCache } from './storeCache';

export type RulesetScope = 'account' | 'zone';

/** A rule as stored and returned. */
export interface StoredRule {
  readonly id: string;
  readonly version: string;
  readonly action: string;
  readonly action_parameters?: Readonly<Record<string, unknown>>;
  readonly expression: string;
  readonly description: string;
  readonly last_updated: string;
  readonly ref: string;
  readonly enabled: boolean;
  readonly logging?: { readonly enabled: boolean };
  readonly exposed_credential_check?: Readonly<Record<string, unknown>>;
  readonly ratelimit?: Readonly<Record<string, unknown>>;
  /** Managed rules only (never stored: the catalog's). */
  readonly categories?: readonly string[];
  /** The anomaly-score rule of a scored managed ruleset only: the score at which it acts. */
  readonly score_threshold?: number;
}

/** A ruleset object as stored in `ruleset_versions.body` and returned by GET. */
export interface StoredRuleset extends WireRulesetHeader {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly kind: RulesetKind;
  readonly version: string;
  readonly last_updated: string;
  readonly phase: Phase;
  readonly rules: readonly StoredRule[];
}

/** A ruleset without its rules: the items of list and version-list results. */
export type RulesetHeader = Omit<StoredRuleset, 'rules'>;

/**
 * A rule as a write brings it: its definition, plus the id or ref that says which
 * existing rule it is (both optional: a rule with neither is new).
 */
export interface RuleInput {
  readonly id?: string;
  readonly ref?: string;
  readonly action: string;
  readonly action_parameters?: Readonly<Record<string, unknown>>;
  readonly expression: string;
  readonly description?: string;
  readonly enabled?: boolean;
  readonly logging?: { readonly enabled: boolean };
  readonly exposed_credential_check?: Readonly<Record<string, unknown>>;
  readonly ratelimit?: Readonly<Record<string, unknown>>;
}

/** The fields that make a rule's definition: a change to any of them bumps the rule's version. */
const DEFINITION = ['action', 'action_parameters', 'expression', 'description', 'enabled', 'logging', 'exposed_credential_check', 'ratelimit', 'ref'] as const;

export const ENTRY_POINT_KINDS: readonly RulesetKind[] = ['root', 'zone'];

export function entryPointKind(scope: RulesetScope): 'root' | 'zone' {
  return scope === 'zone' ? 'zone' : 'root';
}

/** A ruleset's row: what never changes, and the number its versions are given above (schema 4). */
interface RulesetRow {
  id: string;
  scope: RulesetScope;
  scope_id: string;
  kind: RulesetKind;
  phase: Phase;
  /** The newest version number deleted (or, from before schema 4, given): new versions are numbered above it. */
  version_floor: number;
}

function headerOf(r: Pick<StoredRuleset, keyof RulesetHeader>): RulesetHeader {
  return { id: r.id, name: r.name, description: r.description, kind: r.kind, version: r.version, last_updated: r.last_updated, phase: r.phase };
}

// --- Reading -----------------------------------------------------------------------------

function row(store: Store, scope: RulesetScope, scopeId: string, rulesetId: string): RulesetRow | undefined {
  const rows = rowCacheOf(store);
  const hit = rows.get(rulesetId);
  if (hit) return hit.scope === scope && hit.scope_id === scopeId ? hit : undefined;
  const r = store.get<RulesetRow>('SELECT * FROM rulesets WHERE id = ? AND scope = ? AND scope_id = ?', [rulesetId, scope, scopeId]);
  if (r) keepRow(store, r);
  return r;
}

/** The `rulesets` rows of recently used rulesets (every write reads its ruleset's row; only deleteVersion changes one). */
const rowCacheOf = storeCache(() => new Map<string, RulesetRow>());

function keepRow(store: Store, r: RulesetRow): void {
  const c = rowCacheOf(store);
  c.delete(r.id);
  if (c.size >= CACHE_SIZE) c.delete(c.keys().next().value!);
  c.set(r.id, r);
}

interface VersionHeaderRow {
  version: number;
  last_updated: string;
  name: string;
  description: string;
}

/** The current version of recently used rulesets: the hot reads (GET, every write's merge) skip the rows. */
interface Cached {
  readonly scope: RulesetScope;
  readonly scopeId: string;
  readonly ruleset: StoredRuleset;
}

/** Rows and account maps kept (small, a count bounds them). */
const CACHE_SIZE = 512;

/**
 * Rulesets kept: at most this many bytes of their JSON, least recently used out first (a
 * count would bound nothing: one ruleset can be megabytes, 1000 rules in an 8 MiB body).
 * 64 MiB holds 200 zones × 500 rules (~38 MB) with room; their objects take three to
 * four times their JSON in the heap. A ruleset dropped is read from the store when next asked
 * (a 500-rule one in ~10 ms), and its live rows (rulesetHistory.ts) go with it.
 */
export const RULESET_CACHE_BYTES = 64 * 1024 * 1024;
/** What an entry costs besides its JSON (the header, the map's entry), so many tiny rulesets are bounded too. */
const ENTRY_BYTES = 1024;
let rulesetCacheBudget = RULESET_CACHE_BYTES;
const cacheOf = storeCache((store) => new SizedLru<Cached>(rulesetCacheBudget, (id) => forgetLiveRows(store, id)));

/** Sets the budget of the ruleset caches first used from now on (a store's is made at its first ruleset; tests use a small one). */
export function setRulesetCacheBudget(bytes = RULESET_CACHE_BYTES): void {
  rulesetCacheBudget = bytes;
}

/** The bytes a store's ruleset cache holds now, and how many rulesets (tests, benchmarks). */
export function rulesetCacheSize(store: Store): { bytes: number; rulesets: number } {
  const c = cacheOf(store);
  return { bytes: c.bytes, rulesets: c.size };
}

/**
 * A stored ruleset's JSON bytes: its header's, then its rules' texts (each serialized once,
 * jsonText.ts), the runs of rules it shares with `before` (the version it replaces)
 * copied from that version's bytes. `rules` is the object's last key, as assemble and
 * saveRuleset make it.
 */
function rulesetJson(rs: StoredRuleset, before?: Joined): Joined {
  const { rules, ...header } = rs;
  const head = JSON.stringify(header);
  return joinedJson(`${head.slice(0, -1)},"rules":[`, rules, ']}', before);
}

/** A ruleset object the store made: it never changes, so its JSON is made once (from `before`'s, when that was made). */
function fixed(rs: StoredRuleset, before?: StoredRuleset): StoredRuleset {
  // Only bytes already made are used (never made here), and remember() makes this
  // version's at once: no version holds on to the one before it.
  const base = before && madeJoined(before);
  fixJson(rs, () => rulesetJson(rs, base));
  return rs;
}

function remember(store: Store, scope: RulesetScope, scopeId: string, ruleset: StoredRuleset): void {
  // Its bytes are made now: every answer of a ruleset sends them, and they are its weight.
  cacheOf(store).set(ruleset.id, { scope, scopeId, ruleset }, ENTRY_BYTES + jsonBytes(ruleset).length);
}

function assemble(r: RulesetRow, h: VersionHeaderRow, rules: readonly object[]): StoredRuleset {
  return fixed({
    id: r.id,
    name: h.name,
    description: h.description,
    kind: r.kind,
    version: String(h.version),
    last_updated: h.last_updated,
    phase: r.phase,
    rules: rules as StoredRule[],
  });
}

function headerRow(store: Store, rulesetId: string, version?: number): VersionHeaderRow | undefined {
  return version === undefined
    ? store.get<VersionHeaderRow>('SELECT version, last_updated, name, description FROM ruleset_versions WHERE ruleset_id = ? ORDER BY version DESC LIMIT 1', [rulesetId])
    : store.get<VersionHeaderRow>('SELECT version, last_updated, name, description FROM ruleset_versions WHERE ruleset_id = ? AND version = ?', [rulesetId, version]);
}

/** Rulesets read from the store because the cache did not hold them, per store (tests: what a rollback left cached). */
const storeReads = new WeakMap<Store, number>();

export function rulesetStoreReads(store: Store): number {
  return storeReads.get(store) ?? 0;
}

/** The newest retained version of a stored ruleset (not a managed one), or undefined. */
export function latestRuleset(store: Store, scope: RulesetScope, scopeId: string, rulesetId: string): StoredRuleset | undefined {
  const hit = cacheOf(store).get(rulesetId);
  if (hit) return hit.scope === scope && hit.scopeId === scopeId ? hit.ruleset : undefined;
  const r = row(store, scope, scopeId, rulesetId);
  const h = r && headerRow(store, rulesetId);
  if (!r || !h) return undefined;
  storeReads.set(store, rulesetStoreReads(store) + 1);
  const rs = assemble(r, h, readRules(store, rulesetId, h.version, true));
  remember(store, scope, scopeId, rs);
  return rs;
}

/** One version of a stored ruleset, or undefined. */
export function storedVersion(store: Store, scope: RulesetScope, scopeId: string, rulesetId: string, version: number): StoredRuleset | undefined {
  const r = row(store, scope, scopeId, rulesetId);
  const h = r && headerRow(store, rulesetId, version);
  if (!r || !h) return undefined;
  const latest = latestRuleset(store, scope, scopeId, rulesetId);
  if (latest?.version === String(version)) return latest;
  return assemble(r, h, readRules(store, rulesetId, version));
}

/**
 * Whether stored ruleset `rulesetId` has a version written `version` (its number as the API
 * writes it: "1", not "01"), without reading its rules.
 */
export function hasVersion(store: Store, rulesetId: string, version: string): boolean {
  if (!/^[1-9][0-9]{0,14}$/.test(version)) return false;
  const latest = cacheOf(store).get(rulesetId)?.ruleset.version;
  if (latest === version) return true;
  return store.get<{ one: number }>('SELECT 1 AS one FROM ruleset_versions WHERE ruleset_id = ? AND version = ?', [rulesetId, Number(version)]) !== undefined;
}

/** A page of version headers, oldest first: versions after `after`, at most `limit`. */
export interface VersionPage {
  readonly headers: RulesetHeader[];
  /** More versions follow the page. */
  readonly more: boolean;
}

/** Headers of the retained versions (all of them, or a page), oldest first; undefined when there is no such ruleset. */
export function storedVersions(store: Store, scope: RulesetScope, scopeId: string, rulesetId: string, page: { after?: number; limit?: number } = {}): RulesetHeader[] {
  return storedVersionPage(store, scope, scopeId, rulesetId, page).headers;
}

export function storedVersionPage(store: Store, scope: RulesetScope, scopeId: string, rulesetId: string, page: { after?: number; limit?: number } = {}): VersionPage {
  const r = row(store, scope, scopeId, rulesetId);
  if (!r) return { headers: [], more: false };
  const limit = page.limit ?? -1;
  const rows = store.all<VersionHeaderRow>(
    'SELECT version, last_updated, name, description FROM ruleset_versions WHERE ruleset_id = ? AND version > ? ORDER BY version LIMIT ?',
    [rulesetId, page.after ?? 0, limit < 0 ? -1 : limit + 1],
  );
  const more = limit >= 0 && rows.length > limit;
  return { headers: (more ? rows.slice(0, limit) : rows).map((h) => headerOf({ ...assemble(r, h, []) })), more };
}

/** Headers of the current versions of every stored ruleset of a scope. */
export function storedRulesets(store: Store, scope: RulesetScope, scopeId: string): RulesetHeader[] {
  return store
    .all<RulesetRow & { hname: string; hdescription: string; hversion: number; hlast: string }>(
      `SELECT r.*, v.name AS hname, v.description AS hdescription, v.version AS hversion, v.last_updated AS hlast
         FROM rulesets r JOIN ruleset_versions v ON v.ruleset_id = r.id
        WHERE r.scope = ? AND r.scope_id = ?
          AND v.version = (SELECT MAX(version) FROM ruleset_versions WHERE ruleset_id = r.id)`,
      [scope, scopeId],
    )
    .map((r) => headerOf(assemble(r, { name: r.hname, description: r.hdescription, version: r.hversion, last_updated: r.hlast }, [])));
}

/**
 * Which rulesets exist, read on every write and GET: the account's custom rulesets (id →
 * phase, what an execute rule may run) and the entry points' ids. An account's list is
 * kept until one of its custom rulesets is created or deleted, an entry point's id until
 * it is deleted (kind and phase never change; a missing entry point is not kept), and
 * what a write read or wrote until that write rolls back (storeCache.ts).
 */
const customOf = storeCache(() => new Map<string, ReadonlyMap<string, Phase>>());
const entryPointsOf = storeCache(() => new Map<string, string>());
/**
 * The list last given per account, kept when the caches above are emptied (even by a
 * rollback: it is only compared with what is read): a list read again with the same
 * content is that same Map, so a Map's identity changes only when its account's list does,
 * and the rule findings cached under it (routes/rulesets.ts) survive a ruleset created or
 * deleted elsewhere, a dry run or a refused write.
 */
const lastCustom = new WeakMap<Store, Map<string, ReadonlyMap<string, Phase>>>();

/**
 * Forgets what a ruleset created or deleted changes: its account's list of custom
 * rulesets, and the id of an entry point deleted. Not the other accounts' lists: a dry run
 * or refused write that creates one would otherwise make every account's read them again.
 */
function forgetCreated(store: Store, kind: RulesetKind, scopeId: string): void {
  if (kind === 'custom') customOf(store).delete(scopeId);
}

function forgetDeleted(store: Store, rulesetId: string): void {
  const custom = customOf(store);
  for (const [account, phases] of custom) if (phases.has(rulesetId)) custom.delete(account);
  const entryPoints = entryPointsOf(store);
  for (const [key, id] of entryPoints) if (id === rulesetId) entryPoints.delete(key);
}

export function customRulesetPhases(store: Store, accountId: string): ReadonlyMap<string, Phase> {
  const c = customOf(store);
  let phases = c.get(accountId);
  if (!phases) {
    const read = new Map(
      store.all<{ id: string; phase: Phase }>(
        "SELECT id, phase FROM rulesets r WHERE scope = 'account' AND scope_id = ? AND kind = 'custom' AND EXISTS (SELECT 1 FROM ruleset_versions WHERE ruleset_id = r.id)",
        [accountId],
      ).map((r) => [r.id, r.phase]),
    );
    let lasts = lastCustom.get(store);
    if (!lasts) lastCustom.set(store, (lasts = new Map()));
    const last = lasts.get(accountId);
    phases = last && sameEntries(last, read) ? last : read;
    lasts.delete(accountId);
    if (lasts.size >= CACHE_SIZE) lasts.delete(lasts.keys().next().value!);
    lasts.set(accountId, phases);
    c.set(accountId, phases);
  }
  return phases;
}

function sameEntries<K, V>(a: ReadonlyMap<K, V>, b: ReadonlyMap<K, V>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}

/** The id of the scope's entry point of a phase, or undefined. */
export function entryPointId(store: Store, scope: RulesetScope, scopeId: string, phase: Phase): string | undefined {
  const c = entryPointsOf(store);
  const key = `${scope}/${scopeId}/${phase}`;
  const hit = c.get(key);
  if (hit !== undefined) return hit;
  const id = store.get<{ id: string }>("SELECT id FROM rulesets WHERE scope = ? AND scope_id = ? AND phase = ? AND kind IN ('root', 'zone')", [scope, scopeId, phase])?.id;
  if (id !== undefined) {
    if (c.size >= CACHE_SIZE) c.delete(c.keys().next().value!);
    c.set(key, id);
  }
  return id;
}

/** The scope's entry point of a phase (its current version), or undefined. */
export function entryPoint(store: Store, scope: RulesetScope, scopeId: string, phase: Phase): StoredRuleset | undefined {
  const id = entryPointId(store, scope, scopeId, phase);
  return id === undefined ? undefined : latestRuleset(store, scope, scopeId, id);
}

/**
 * What applies to a zone, current versions: the zone's entry points (kind `zone`), its
 * account's entry points (kind `root`) and its account's custom rulesets (kind `custom`,
 * which `execute` rules of either may run). Callers tell them apart by `kind`. A version
 * of a custom ruleset that an execute rule of the zone's entry points pins
 * (`action_parameters.version`) comes too, just before that ruleset's current version: the
 * engine runs it for that rule (rulesets/engine.ts ZoneConfig.customRulesets), and whoever
 * looks a custom ruleset up by id alone, the last one given, finds the current version.
 */
export function zoneRulesets(store: Store, zoneId: string): StoredRuleset[] {
  const zone = store.get<{ account_id: string }>('SELECT account_id FROM zones WHERE id = ?', [zoneId]);
  if (!zone) return [];
  const current = store
    .all<{ id: string; scope: RulesetScope; scope_id: string }>(
      `SELECT r.id, r.scope, r.scope_id FROM rulesets r
        WHERE ((r.scope = 'zone' AND r.scope_id = ?) OR (r.scope = 'account' AND r.scope_id = ?))
          AND EXISTS (SELECT 1 FROM ruleset_versions WHERE ruleset_id = r.id)
        ORDER BY r.scope DESC, r.phase, r.id`,
      [zoneId, zone.account_id],
    )
    .map((r) => latestRuleset(store, r.scope, r.scope_id, r.id)!);
  const pins = pinnedVersions(current);
  if (pins.size === 0) return current;
  return current.flatMap((rs) => {
    const versions = rs.kind === 'custom' ? pins.get(rs.id) : undefined;
    if (!versions) return [rs];
    const pinned = [...versions]
      .filter((v) => v !== rs.version)
      .sort((a, b) => Number(a) - Number(b))
      .flatMap((v) => {
        const found = hasVersion(store, rs.id, v) ? storedVersion(store, 'account', zone.account_id, rs.id, Number(v)) : undefined;
        return found ? [found] : [];
      });
    return [...pinned, rs];
  });
}

/**
 * The versions of custom rulesets that execute rules of the zone's entry points pin, by
 * ruleset id (a custom ruleset executes none: actions.ts). Account entry points (kind `root`)
 * are left out, as the zone's configuration leaves them (deployment.ts).
 */
function pinnedVersions(rulesets: readonly StoredRuleset[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const rs of rulesets) {
    if (rs.kind !== 'zone') continue;
    for (const rule of rs.rules) {
      const pin = pinOf(rule);
      if (!pin) continue;
      let versions = out.get(pin.id);
      if (!versions) out.set(pin.id, (versions = new Set()));
      versions.add(pin.version);
    }
  }
  return out;
}

/** The ruleset and the version of it an execute rule pins (`action_parameters.version`, other than `latest`), or undefined. */
export function pinOf(rule: { readonly action?: unknown; readonly action_parameters?: unknown }): { readonly id: string; readonly version: string } | undefined {
  if (rule.action !== 'execute') return undefined;
  const p = rule.action_parameters as { readonly id?: unknown; readonly version?: unknown } | undefined;
  return typeof p?.id === 'string' && typeof p.version === 'string' && p.version !== 'latest' ? { id: p.id, version: p.version } : undefined;
}

/** An execute rule that deploys a ruleset. */
export interface Deployment {
  readonly rulesetId: string;
  readonly rulesetName: string;
  readonly scope: RulesetScope;
  readonly scopeId: string;
  /** The deploying ruleset's kind and phase (an entry point is named by its zone or account and phase, not its name: they are all 'default'). */
  readonly kind: string;
  readonly phase: string;
  readonly ruleId: string;
  /** The version the rule pins (`latest` when it pins none). */
  readonly version: string;
}

/** Every enabled or disabled execute rule, in the current versions of the account's and its zones' rulesets, that runs `rulesetId`. */
export function deploymentsOf(store: Store, accountId: string, rulesetId: string): Deployment[] {
  // The current rules (live rows) of the account's and its zones' rulesets that name the id.
  // CROSS JOIN keeps rulesets the outer loop, so the rows are found by the live index
  // rather than by a scan of every version's rows and bodies.
  // The rows a staging closed (to_version above the newest header) are still current, its new ones not yet (rulesetHistory.ts).
  const newest = '(SELECT MAX(version) FROM ruleset_versions v WHERE v.ruleset_id = r.id)';
  const scopes = "((r.scope = 'account' AND r.scope_id = ?) OR (r.scope = 'zone' AND r.scope_id IN (SELECT id FROM zones WHERE account_id = ?)))";
  const rows = store.all<{ body: string; ruleset_id: string; scope: RulesetScope; scope_id: string; pos: number }>(
    `SELECT x.body, r.id AS ruleset_id, r.scope, r.scope_id, x.pos
       FROM rulesets r CROSS JOIN ruleset_rules x ON x.ruleset_id = r.id AND x.to_version IS NULL AND +x.from_version <= ${newest}
      WHERE ${scopes} AND x.body LIKE ?
     UNION ALL
     SELECT x.body, r.id AS ruleset_id, r.scope, r.scope_id, x.pos
       FROM rulesets r CROSS JOIN ruleset_rules x ON x.ruleset_id = r.id AND x.to_version > ${newest}
      WHERE ${scopes} AND x.body LIKE ?
      ORDER BY ruleset_id, pos`,
    [accountId, accountId, `%${rulesetId}%`, accountId, accountId, `%${rulesetId}%`],
  );
  const out: Deployment[] = [];
  for (const r of rows) {
    const rule = JSON.parse(r.body) as StoredRule;
    const p = rule.action_parameters as { id?: unknown; version?: unknown } | undefined;
    if (rule.action === 'execute' && p?.id === rulesetId) {
      const rs = latestRuleset(store, r.scope, r.scope_id, r.ruleset_id);
      out.push({ rulesetId: r.ruleset_id, rulesetName: rs?.name ?? '', kind: rs?.kind ?? '', phase: rs?.phase ?? '', scope: r.scope, scopeId: r.scope_id, ruleId: rule.id, version: typeof p.version === 'string' ? p.version : 'latest' });
    }
  }
  return out;
}

// --- Managed rulesets (the catalog) ------------------------------------------------------

/** The `source` the hosted API gives every WAF managed ruleset (crs-and-managed-rules §4.1). */
export const MANAGED_SOURCE = 'firewall_managed';

export function managedRuleset(id: string, catalog: ManagedCatalog = defaultCatalog): ManagedRuleset | undefined {
  return catalog.rulesets.find((r) => r.id === id);
}

/**
 * A managed ruleset as the API shows it to users: rules with their categories and no
 * expression (rules-api §2.2; the engine keeps the expressions, users see what a rule
 * is for and tune it with overrides).
 */
export function managedObject(rs: ManagedRuleset, v: ManagedRulesetVersion | undefined = rulesetVersion(rs)): StoredRuleset | undefined {
  if (!v) return undefined;
  return {
    ...managedHeader(rs, v),
    rules: v.rules.map((r) => ({
      id: r.id,
      version: v.version,
      action: r.action,
      ...(r.action_parameters ? { action_parameters: r.action_parameters as Record<string, unknown> } : {}),
      ...(r.score_threshold !== undefined ? { score_threshold: r.score_threshold } : {}),
      // `categories` has at least one item when present.
      ...(r.categories.length > 0 ? { categories: r.categories } : {}),
      description: r.description,
      last_updated: v.last_updated,
      ref: r.ref,
      enabled: r.enabled,
    })) as unknown as StoredRule[],
  };
}

export function managedHeader(rs: ManagedRuleset, v: ManagedRulesetVersion | undefined = rulesetVersion(rs)): RulesetHeader {
  return {
    id: rs.id,
    name: rs.name,
    description: rs.description,
    source: MANAGED_SOURCE,
    kind: 'managed',
    version: v?.version ?? '1',
    last_updated: v?.last_updated ?? '',
    phase: rs.phase,
  };
}

// --- Writing -----------------------------------------------------------------------------

/**
 * Whether two JSON values are the same, whatever the order of keys (an `undefined`
 * member is no member). A PUT of 500 rules compares each to the rule it replaces: this
 * walk was several times cheaper than comparing sorted-key serializations.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameJson(x, b[i]));
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x).filter((k) => x[k] !== undefined);
  if (keys.length !== Object.keys(y).filter((k) => y[k] !== undefined).length) return false;
  return keys.every((k) => sameJson(x[k], y[k]));
}

function sameDefinition(a: Partial<StoredRule>, b: Partial<StoredRule>): boolean {
  return DEFINITION.every((k) => sameJson(a[k], b[k]));
}

function ruleError(message: string, pointer?: string): ApiError {
  return ApiError.of(400, CODES.invalidValue, message, pointer);
}

/**
 * The stored form of the rules a write brings, matched to the current rules: a rule
 * whose `id` names a current rule, or else whose `ref` matches a current rule's ref,
 * keeps that rule's id; its version goes up by one only when its definition changed.
 * Other rules get a new id, version "1", and their id as ref when they bring none.
 * An id that names no current rule is not taken (ids are minted by the service): the
 * rule is new. `pointerOf(i)` names rule `i` in the request body for errors.
 */
export function mergeRules(current: readonly StoredRule[], incoming: readonly RuleInput[], now: string, pointerOf: (i: number) => string = (i) => `/rules/${i}`): StoredRule[] {
  const byId = new Map(current.map((r) => [r.id, r]));
  const byRef = new Map(current.map((r) => [r.ref, r]));
  const usedIds = new Map<string, number>();
  const usedRefs = new Map<string, number>();
  const out: StoredRule[] = [];
  incoming.forEach((rule, i) => {
    const old = (rule.id !== undefined ? byId.get(rule.id) : undefined) ?? (rule.ref !== undefined ? byRef.get(rule.ref) : undefined);
    const id = old?.id ?? newId();
    const before = usedIds.get(id);
    if (before !== undefined) {
      const why = rule.id !== undefined && byId.has(rule.id) ? `the id '${rule.id}'` : `the ref '${rule.ref}'`;
      throw ruleError(`rule ${i + 1} and rule ${before + 1} are the same rule (${why}); each rule may appear once`, `${pointerOf(i)}/${rule.id !== undefined && byId.has(rule.id) ? 'id' : 'ref'}`);
    }
    usedIds.set(id, i);
    const ref = rule.ref ?? old?.ref ?? id;
    const refBefore = usedRefs.get(ref);
    if (refBefore !== undefined) {
      throw ruleError(`'${ref}' is not a valid value for ref because rule ${refBefore + 1} already has it: a ref is unique within a ruleset`, `${pointerOf(i)}/ref`);
    }
    usedRefs.set(ref, i);
    out.push(stored(rule, id, ref, old, now));
  });
  return out;
}

/**
 * mergeRules' answer for a write of one rule (POST and PATCH of a rule), without walking
 * the others: `rule` goes to position `at` of `others` (the ruleset's rules without it),
 * as a new version of `old` when it replaces one, else as a new rule with a new id. Its
 * ref must already be known free among the others. A POST to a ruleset of 1,000 rules
 * built and filled four maps of them to place one.
 */
export function withRule(others: readonly StoredRule[], old: StoredRule | undefined, rule: RuleInput, at: number, now: string): StoredRule[] {
  const id = old?.id ?? newId();
  const out = [...others];
  out.splice(at, 0, stored(rule, id, rule.ref ?? old?.ref ?? id, old, now));
  return out;
}

/**
 * The stored form of `rule` under `id` and `ref`: `old` itself when the write passes it
 * through (the same object, e.g. a PATCH of a rule's position only) or its definition is
 * unchanged, else a new version of it.
 */
function stored(rule: RuleInput, id: string, ref: string, old: StoredRule | undefined, now: string): StoredRule {
  if (old !== undefined && (rule as unknown) === old) return old;
  const draft: Omit<StoredRule, 'version' | 'last_updated'> = {
    id,
    action: rule.action,
    ...(rule.action_parameters !== undefined ? { action_parameters: rule.action_parameters } : {}),
    expression: rule.expression,
    description: rule.description ?? '',
    ref,
    enabled: rule.enabled ?? true,
    ...(rule.logging !== undefined ? { logging: rule.logging } : {}),
    ...(rule.exposed_credential_check !== undefined ? { exposed_credential_check: rule.exposed_credential_check } : {}),
    ...(rule.ratelimit !== undefined ? { ratelimit: rule.ratelimit } : {}),
  };
  // An unchanged rule stays the same object: the store knows its content hash (rulesetHistory.ts).
  if (old !== undefined && sameDefinition(old, draft)) return old;
  return ordered(draft, old ? String(Number(old.version) + 1) : '1', now);
}

/** The rule with its keys in the API's order. */
function ordered(d: Omit<StoredRule, 'version' | 'last_updated'>, version: string, lastUpdated: string): StoredRule {
  return {
    id: d.id,
    version,
    action: d.action,
    ...(d.action_parameters !== undefined ? { action_parameters: d.action_parameters } : {}),
    expression: d.expression,
    description: d.description,
    last_updated: lastUpdated,
    ref: d.ref,
    enabled: d.enabled,
    ...(d.logging !== undefined ? { logging: d.logging } : {}),
    ...(d.exposed_credential_check !== undefined ? { exposed_credential_check: d.exposed_credential_check } : {}),
    ...(d.ratelimit !== undefined ? { ratelimit: d.ratelimit } : {}),
  };
}

/** What a new version of a ruleset is made of. */
export interface RulesetDraft {
  /** Absent: a new ruleset (a new id is minted). */
  readonly id?: string;
  readonly name: string;
  readonly description: string;
  readonly kind: RulesetKind;
  readonly phase: Phase;
  readonly rules: readonly StoredRule[];
}

/** The number the next version of stored ruleset `rulesetId` gets: above every version retained and every one deleted, so a number is never given twice. */
export function nextVersion(store: Store, scope: RulesetScope, scopeId: string, rulesetId: string): number {
  const existing = row(store, scope, scopeId, rulesetId);
  if (!existing) return 1;
  const newest = Number(cacheOf(store).get(rulesetId)?.ruleset.version ?? headerRow(store, rulesetId)?.version ?? 0);
  return Math.max(existing.version_floor, newest) + 1;
}

/**
 * Writes a new version of a ruleset (creating it when `draft.id` is absent) and returns
 * it. Call inside `store.write`. `staged`: its rules' rows are in already
 * (rulesetHistory.ts beginStaging). While another write stages the ruleset's next
 * version, this one is refused (refuseWhileStaging).
 */
export function saveRuleset(store: Store, scope: RulesetScope, scopeId: string, draft: RulesetDraft, now: string = timestamp(), staged?: StagedVersion): StoredRuleset {
  const existing = draft.id !== undefined ? row(store, scope, scopeId, draft.id) : undefined;
  const id = existing?.id ?? draft.id ?? newId();
  if (!staged) refuseWhileStaging(store, id);
  const before = existing ? cacheOf(store).get(id)?.ruleset : undefined;
  const version = existing ? nextVersion(store, scope, scopeId, id) : 1;
  const body = fixed({
    id,
    name: draft.name,
    description: draft.description,
    kind: draft.kind,
    version: String(version),
    last_updated: now,
    phase: draft.phase,
    rules: draft.rules,
  }, before);
  if (!existing) {
    if (!ID.test(id)) throw new Error(`saveRuleset: bad ruleset id ${id}`);
    if (ENTRY_POINT_KINDS.includes(draft.kind) && entryPointId(store, scope, scopeId, draft.phase) !== undefined) {
      throw tooManyEntryPoints(draft.kind, draft.phase);
    }
    store.run('INSERT INTO rulesets (id, scope, scope_id, kind, phase, version_floor) VALUES (?, ?, ?, ?, ?, 0)', [id, scope, scopeId, draft.kind, draft.phase]);
    forgetCreated(store, draft.kind, scopeId);
  }
  store.run('INSERT INTO ruleset_versions (ruleset_id, version, last_updated, name, description) VALUES (?, ?, ?, ?, ?)', [id, version, now, draft.name, draft.description]);
  writeRules(store, id, version, draft.rules, staged);
  remember(store, scope, scopeId, body);
  return body;
}

/** The longest one turn stages a version's rows (rulesetHistory.ts stageMore). */
const STAGE_SLICE_MS = 1;

/**
 * Writes the next version of stored ruleset `rulesetId`, whose rules will be `rules`, with
 * `write(staged)`: a store.write that calls saveRuleset with `staged`. When that version adds
 * hundreds of rows they are staged first, over turns of STAGE_SLICE_MS (`nextTurn` lets other
 * requests in between), and `write` runs in the turn after; should it throw, the staging is
 * undone. Otherwise `write(undefined)` runs at once.
 */
export async function withStagedVersion<T>(
  store: Store,
  scope: RulesetScope,
  scopeId: string,
  rulesetId: string,
  rules: readonly StoredRule[],
  nextTurn: () => Promise<void>,
  write: (staged: StagedVersion | undefined) => T,
): Promise<T> {
  const staged = beginStaging(store, rulesetId, nextVersion(store, scope, scopeId, rulesetId), rules);
  if (!staged) return write(undefined);
  const writes = storeScope(scope, scopeId);
  let finished = false;
  try {
    while (!store.write(() => stageMore(store, staged, STAGE_SLICE_MS), writes)) await nextTurn();
    await nextTurn();
    const result = write(staged);
    finished = true;
    return result;
  } finally {
    endStaging(store, staged);
    if (!finished && staged.inserted > 0) {
      try {
        store.write(() => dropStaged(store, staged), writes);
      } catch {
        // A store that takes no writes: nobody reads the rows, and the ruleset's next write drops them (rulesetHistory.ts).
      }
    }
  }
}

/** The 429 a write of a ruleset gets while another write stages its next version (it takes a few turns: rulesetHistory.ts). */
function refuseWhileStaging(store: Store, rulesetId: string): void {
  if (!isStaging(store, rulesetId)) return;
  throw ApiError.rateLimited(`Ruleset ${rulesetId} is being updated by another request (a large write of its rules, which takes a few milliseconds).`, 1);
}

export function tooManyEntryPoints(kind: RulesetKind, phase: Phase): ApiError {
  return ApiError.of(400, CODES.tooManyEntryPoints, `'${kind}' is not a valid value for kind because exceeded maximum number of ${kind} rulesets for phase ${phase}`, '/kind');
}

/** Deletes a ruleset and all its versions. */
export function deleteRuleset(store: Store, rulesetId: string): void {
  refuseWhileStaging(store, rulesetId);
  forgetLiveRows(store, rulesetId);
  store.run('DELETE FROM ruleset_rules WHERE ruleset_id = ?', [rulesetId]);
  store.run('DELETE FROM ruleset_versions WHERE ruleset_id = ?', [rulesetId]);
  store.run('DELETE FROM rulesets WHERE id = ?', [rulesetId]);
  cacheOf(store).delete(rulesetId);
  rowCacheOf(store).delete(rulesetId);
  forgetDeleted(store, rulesetId);
}

/**
 * Deletes one version (the ruleset row keeps its number as the floor of the next, so it
 * is never given again) and the rule rows only it used. When it was the newest retained
 * one, the one before becomes current. Never the only one.
 */
export function deleteVersion(store: Store, rulesetId: string, version: number): void {
  refuseWhileStaging(store, rulesetId);
  store.run('DELETE FROM ruleset_versions WHERE ruleset_id = ? AND version = ?', [rulesetId, version]);
  store.run('UPDATE rulesets SET version_floor = MAX(version_floor, ?) WHERE id = ?', [version, rulesetId]);
  rowCacheOf(store).delete(rulesetId);
  const newest = headerRow(store, rulesetId);
  if (newest && newest.version < version) reopenAt(store, rulesetId, newest.version);
  else {
    // A version before the newest: the retained ones on each side of it keep their rows.
    const before = store.get<{ v: number | null }>('SELECT MAX(version) AS v FROM ruleset_versions WHERE ruleset_id = ? AND version < ?', [rulesetId, version])?.v ?? undefined;
    const after = store.get<{ v: number | null }>('SELECT MIN(version) AS v FROM ruleset_versions WHERE ruleset_id = ? AND version > ?', [rulesetId, version])?.v ?? undefined;
    if (after !== undefined) dropRowsBetween(store, rulesetId, before, after);
  }
  cacheOf(store).delete(rulesetId);
}

/** An execute rule deployed without a version runs the newest one: the API says so, `version: "latest"`. */
export function withVersion(p: Record<string, unknown>): Record<string, unknown> {
  if (p.version !== undefined) return p;
  const { id, ...rest } = p;
  return { id, version: 'latest', ...rest };
}

/**
 * Replaces the rules of the scope's entry point of a phase, creating it (named
 * "default") when missing, and returns the new version. `rules` are matched to the
 * current ones by id, then ref (see `mergeRules`); `""` for id, version or ref (as the
 * WAF migration config has them) means absent. For the migration flow and the demo seed:
 * no validation beyond the store's own rules (unique ids and refs). Runs in one write
 * transaction (joining the caller's).
 */
export function putEntryPoint(
  store: Store,
  scope: RulesetScope,
  scopeId: string,
  phase: Phase,
  rules: readonly (RuleInput & { readonly version?: string })[],
  options: { readonly name?: string; readonly description?: string } = {},
): StoredRuleset {
  return store.write(() => {
    const now = timestamp();
    const current = entryPoint(store, scope, scopeId, phase);
    const inputs: RuleInput[] = rules.map((r) => {
      const { version: _v, ...rest } = r;
      return {
        ...rest,
        ...(r.id === '' ? { id: undefined } : {}),
        ...(r.ref === '' ? { ref: undefined } : {}),
        // As the API stores an execute rule written without a version (routes/rulesets.ts).
        ...(r.action === 'execute' && r.action_parameters ? { action_parameters: withVersion(r.action_parameters as Record<string, unknown>) } : {}),
      };
    });
    return saveRuleset(
      store,
      scope,
      scopeId,
      {
        id: current?.id,
        name: options.name ?? current?.name ?? 'default',
        description: options.description ?? current?.description ?? '',
        kind: entryPointKind(scope),
        phase,
        rules: mergeRules(current?.rules ?? [], inputs, now),
      },
      now,
    );
  });
}
