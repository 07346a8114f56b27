/**
 * What a zone's Terraform export reads, in what order, and what a refusal means: the one
 * implementation behind `rulesmith terraform export` (cli/terraform.ts, over fetch) and the
 * extension's Export to Terraform (client/src/api/terraformReader.ts, over its API client).
 * No I/O here: the reads come in as a ZoneRulesetReader.
 *
 * Only what the zone needs is read: the zone's list of rulesets, each of its entry points
 * by id, then — when an entry point executes a ruleset that is not a managed one (the
 * zone's list marks them, and the catalog knows Cloudflare's) — the zone itself (for its
 * account) and each such custom ruleset by its id, never the account's list. A custom
 * ruleset belongs to the account, so a token scoped to the zone alone cannot read it: that
 * refusal (a ZoneReadRefused) says which rule needs which permission. A custom ruleset the
 * account does not have (404) is left out, and the rule keeps its id as written.
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

/** The reads an export needs, each of which fails by throwing. */
export interface ZoneRulesetReader {
  /** The zone's rulesets: `GET /zones/Z/rulesets`. */
  listZoneRulesets(zoneId: string): Promise<readonly RulesetSummary[]>;
  /** One of the zone's rulesets: `GET /zones/Z/rulesets/R`. */
  getZoneRuleset(zoneId: string, rulesetId: string): Promise<RulesetBody>;
  /** The account the zone belongs to (`GET /zones/Z`), undefined when it does not say. */
  zoneAccountId(zoneId: string): Promise<string | undefined>;
  /** One of the account's rulesets: `GET /accounts/A/rulesets/R`. */
  getAccountRuleset(accountId: string, rulesetId: string): Promise<RulesetBody>;
  /** What an error the reads above threw means. */
  classify(error: unknown): ReadFailure;
  /** A refused read as the message opens with it: `GET /accounts/A/rulesets/R: 403 Authentication error (10000)`. */
  describe(error: unknown): string;
}

/** A read the export needs was refused: the message names the request, the rule that needs it, the permission and the fix. */
export class ZoneReadRefused extends Error {
  constructor(
    message: string,
    /** The reader's error. */
    readonly refusal: unknown,
  ) {
    super(message);
    this.name = 'ZoneReadRefused';
  }
}

/**
 * The zone's entry points, then the custom rulesets their execute rules run (each once, in
 * the order the rules first run them). Errors other than the refusals described above are
 * the reader's, thrown as they came.
 */
export async function collectZoneRulesets(reader: ZoneRulesetReader, zoneId: string): Promise<ExportedRuleset[]> {
  const list = await reader.listZoneRulesets(zoneId);
  const out: ExportedRuleset[] = [];
  for (const s of list.filter((r) => r.kind === 'zone')) {
    out.push({ ruleset: await reader.getZoneRuleset(zoneId, s.id), scope: { zoneId } });
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
  let accountId: string | undefined;
  try {
    accountId = await reader.zoneAccountId(zoneId);
  } catch (e) {
    if (reader.classify(e) !== 'denied') throw e;
    const [id] = executed.keys();
    throw new ZoneReadRefused(`${reader.describe(e)}. ${runs(id)}, and finding the account it belongs to needs the zone itself, which the API token may not read. Export with a token that also has the "Zone Read" permission on the zone.`, e);
  }
  if (!accountId) return out;
  for (const id of executed.keys()) {
    let ruleset: RulesetBody;
    try {
      ruleset = await reader.getAccountRuleset(accountId, id);
    } catch (e) {
      const failure = reader.classify(e);
      // Not one of the account's: the rule keeps the id as written.
      if (failure === 'missing') continue;
      if (failure !== 'denied') throw e;
      throw new ZoneReadRefused(
        `${reader.describe(e)}. ${runs(id)}, which belongs to account ${accountId}, and the API token may not read that account's rulesets: that needs the account-level permission "Account Rulesets Read" (or "Account WAF Read"), which a token scoped to the zone alone lacks. Export with a token that also has that permission on account ${accountId}.`,
        e,
      );
    }
    if (ruleset.kind === 'custom') out.push({ ruleset, scope: { accountId } });
  }
  return out;
}
