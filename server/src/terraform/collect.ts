/**
 * What a zone's Terraform export reads, in what order, and what a refusal means: the one
 * implementation behind `rulesmith terraform export` (cli/terraform.ts, over fetch) and the
 * extension's Export to Terraform (client/src/api/terraformReader.ts, over its API client).
 * No I/O here: the reads come in as a ZoneRulesetReader, and what a failed read means
 * (classify, from the HTTP status the reader finds in its error) is decided here, once.
 *
 * Only what the zone needs is read: the zone's list of rulesets (every page of it: the
 * reader's business), each of its entry points by id, then — when an entry point executes a
 * ruleset that is not a managed one (the zone's list marks them, and the catalog knows
 * Cloudflare's) — the zone itself (for its account) and each such custom ruleset by its id,
 * never the account's list. An export never leaves out silently what the zone runs: a read
 * the token is refused stops it with a ZoneReadRefused that names the request, what needs
 * it and the permission to add (an entry point: its phase's permission; the zone itself:
 * "Zone Read", and the account's rulesets permission the next read needs; a custom ruleset:
 * the account-level rulesets permission, as a token scoped to the zone alone lacks it), and a
 * zone that does not say its account while it executes custom rulesets stops it too
 * (ZoneExportStopped). Only a custom ruleset the account does not have (404) is left out,
 * and the rule keeps its id as written.
 */
import { defaultCatalog } from '../managed/catalog';
import type { ExportedRuleset } from './export';

/** One ruleset of the zone's list (`GET /zones/Z/rulesets`). */
export interface RulesetSummary {
  readonly id: string;
  readonly kind?: string;
  readonly phase?: string;
}

/** A ruleset as the API returns it (`GET …/rulesets/R`). */
export type RulesetBody = Readonly<Record<string, unknown>> & { readonly id: string; readonly rules?: readonly Readonly<Record<string, unknown>>[] };

/** What a failed read means: the credentials were refused (401, 403), there is no such thing (404), or anything else. */
export type ReadFailure = 'denied' | 'missing' | 'other';

/** What a read that failed with HTTP `status` means (undefined: no answer, or not an HTTP one). */
export function classify(status: number | undefined): ReadFailure {
  return status === 401 || status === 403 ? 'denied' : status === 404 ? 'missing' : 'other';
}

/** The reads an export needs, each of which fails by throwing. */
export interface ZoneRulesetReader {
  /** The zone's rulesets, every page of the list: `GET /zones/Z/rulesets`. */
  listZoneRulesets(zoneId: string): Promise<readonly RulesetSummary[]>;
  /** One of the zone's rulesets: `GET /zones/Z/rulesets/R`. */
  getZoneRuleset(zoneId: string, rulesetId: string): Promise<RulesetBody>;
  /** The account the zone belongs to (`GET /zones/Z`), undefined when it does not say. */
  zoneAccountId(zoneId: string): Promise<string | undefined>;
  /** One of the account's rulesets: `GET /accounts/A/rulesets/R`. */
  getAccountRuleset(accountId: string, rulesetId: string): Promise<RulesetBody>;
  /** The HTTP status an error the reads above threw carries, undefined when it is no API answer (classify says what it means). */
  status(error: unknown): number | undefined;
  /** A refused read as the message opens with it: `GET /accounts/A/rulesets/R: 403 Authentication error (10000)`. */
  describe(error: unknown): string;
}

/** The export cannot be made whole: the message says what is missing, why, and what to do. */
export class ZoneExportStopped extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ZoneExportStopped';
  }
}

/** A read the export needs was refused: the message names the request, what needs it, the permission and the fix. */
export class ZoneReadRefused extends ZoneExportStopped {
  constructor(
    message: string,
    /** The reader's error. */
    readonly refusal: unknown,
  ) {
    super(message);
    this.name = 'ZoneReadRefused';
  }
}

/** The account-level permission that reads an account's custom rulesets. */
const ACCOUNT_RULESETS = '"Account Rulesets Read" (or "Account WAF Read")';

/**
 * The WAF's phases, whose entry points the zone-level permission "Zone WAF Read" reads. The
 * other phases belong to other products (transform rules, redirects, …), each with a read
 * permission of its own, which the messages do not name: the reference does not say which.
 */
const WAF_READ_PHASES: ReadonlySet<string> = new Set(['http_request_firewall_custom', 'http_request_firewall_managed', 'http_response_firewall_managed', 'http_ratelimit']);

/** Why reading the zone's entry point of `phase` was refused, and what permission reads it. */
function entryPointPermission(phase: string | undefined): string {
  if (phase === undefined) return 'each phase\'s rulesets need the read permission of the product that owns the phase ("Zone WAF Read" reads only the WAF\'s)';
  if (WAF_READ_PHASES.has(phase)) return `the ${phase} phase needs the zone-level permission "Zone WAF Read"`;
  return `the ${phase} phase needs the read permission of the product that owns it ("Zone WAF Read" reads only the WAF's phases)`;
}

/**
 * The zone's entry points, then the custom rulesets their execute rules run (each once, in
 * the order the rules first run them). Errors other than the refusals described above are
 * the reader's, thrown as they came.
 */
export async function collectZoneRulesets(reader: ZoneRulesetReader, zoneId: string, leftOut: (what: string) => void = () => undefined): Promise<ExportedRuleset[]> {
  const failure = (e: unknown) => classify(reader.status(e));
  const list = await reader.listZoneRulesets(zoneId);
  const out: ExportedRuleset[] = [];
  for (const s of list.filter((r) => r.kind === 'zone')) {
    let ruleset: RulesetBody;
    try {
      ruleset = await reader.getZoneRuleset(zoneId, s.id);
    } catch (e) {
      if (failure(e) !== 'denied') throw e;
      const which = s.phase === undefined ? `entry point ${s.id}` : `${s.phase} entry point (ruleset ${s.id})`;
      throw new ZoneReadRefused(
        `${reader.describe(e)}. The zone's ${which} is part of the export, and the API token may not read it: ${entryPointPermission(s.phase)}. Export with a token that also has that permission on the zone.`,
        e,
      );
    }
    out.push({ ruleset, scope: { zoneId } });
  }
  const managed = new Set([...list.filter((r) => r.kind === 'managed').map((r) => r.id), ...defaultCatalog.rulesets.map((r) => r.id)]);
  // Each custom ruleset executed, with the first rule that runs it (for the messages).
  const executed = new Map<string, string>();
  for (const { ruleset } of out) {
    ((ruleset.rules as RulesetBody['rules']) ?? []).forEach((rule, i) => {
      const id = (rule.action_parameters as { id?: unknown } | undefined)?.id;
      if (rule.action !== 'execute' || typeof id !== 'string' || managed.has(id) || executed.has(id)) return;
      executed.set(id, `rule ${i + 1}${typeof rule.ref === 'string' ? ` "${rule.ref}"` : ''} of the zone's ${String(ruleset.phase ?? ruleset.id)} ruleset`);
    });
  }
  if (executed.size === 0) return out;
  const runs = (id: string) => `${executed.get(id)!.replace(/^r/, 'R')} executes custom ruleset ${id}`;
  const [first] = executed.keys();
  const more = executed.size > 1 ? ` (and ${executed.size - 1} more custom ruleset${executed.size > 2 ? 's' : ''})` : '';
  let accountId: string | undefined;
  try {
    accountId = await reader.zoneAccountId(zoneId);
  } catch (e) {
    if (failure(e) !== 'denied') throw e;
    throw new ZoneReadRefused(
      `${reader.describe(e)}. ${runs(first)}${more}, and finding the account it belongs to needs the zone itself, which the API token may not read. Export with a token that also has the "Zone Read" permission on the zone and, to read the custom ruleset then, the account-level permission ${ACCOUNT_RULESETS} on the zone's account.`,
      e,
    );
  }
  if (!accountId) {
    throw new ZoneExportStopped(
      `GET /zones/${zoneId} does not say which account the zone belongs to. ${runs(first)}${more}, which belongs to that account: without its id the export cannot read it, and would lack it. Export from an API that answers the zone with its "account" (the Cloudflare API does).`,
    );
  }
  for (const id of executed.keys()) {
    let ruleset: RulesetBody;
    try {
      ruleset = await reader.getAccountRuleset(accountId, id);
    } catch (e) {
      const why = failure(e);
      // Not one of the account's: the rule keeps the id as written, and the reader is told.
      if (why === 'missing') {
        leftOut(`custom ruleset ${id}: ${runs(id).replace(/^R/, 'r')}, and account ${accountId} has no ruleset with that id; the rule keeps the id as written (terraform apply fails until it exists)`);
        continue;
      }
      if (why !== 'denied') throw e;
      throw new ZoneReadRefused(
        `${reader.describe(e)}. ${runs(id)}, which belongs to account ${accountId}, and the API token may not read that account's rulesets: that needs the account-level permission ${ACCOUNT_RULESETS}, which a token scoped to the zone alone lacks. Export with a token that also has that permission on account ${accountId}.`,
        e,
      );
    }
    if (ruleset.kind === 'custom') out.push({ ruleset, scope: { accountId } });
    else leftOut(`ruleset ${id}: ${runs(id).replace(/^R/, 'r')}, and it is a ${String(ruleset.kind)} ruleset of account ${accountId}, not a custom one; the rule keeps the id as written`);
  }
  return out;
}
