/**
 * `rulesmith terraform export --zone Z [--api URL] [--provider 4|5]`: a zone's entry-point
 * rulesets and the custom rulesets they execute, read from the rules API, as
 * `cloudflare_ruleset` resources with `import` blocks (server/src/terraform/export.ts).
 * The API token comes from RULESMITH_API_TOKEN or CLOUDFLARE_API_TOKEN. Of the account only
 * the custom rulesets the zone executes are read (fetchZoneRulesets), so a token scoped to
 * the zone exports a zone that runs managed rulesets.
 *
 * `rulesmith terraform import FILE.tf [--out DIR]`: the file's `cloudflare_ruleset` resources
 * as ruleset JSON (one ruleset, or a zone file `{"entryPoints", "customRulesets"}` for
 * several, as `eval --config` and `preview` take; `--out` writes one
 * `<resource>.ruleset.json` per resource instead). Values Terraform only knows at plan time
 * (`var.x`) are kept as written and listed on stderr.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { everyPage, type CursorInfo } from '../cursorPages';
import { collectZoneRulesets, type RulesetBody, type RulesetSummary, type ZoneRulesetReader } from '../terraform/collect';
import { exportTerraform, v4LeftOut, type ExportedRuleset, type ProviderVersion } from '../terraform/export';
import { parseHcl } from '../terraform/hcl';
import { locate } from '../terraform/locate';
import { importIds, resourcesOf, toRuleset, type ImportedRuleset } from '../terraform/rulesetJson';
import { isLoopback } from '../loopback';
import { fsReason } from './files';
import { InputError, parseOptions, readInput, UsageError } from './input';
import type { Io } from './io';

export const DEFAULT_API = 'https://api.cloudflare.com/client/v4';

export function runTerraformCommand(args: readonly string[], io: Io, env: Readonly<Record<string, string | undefined>> = process.env): number | Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'export') {
    const { values, files } = parseOptions(rest, { zone: { type: 'string' }, api: { type: 'string' }, provider: { type: 'string' } });
    if (files.length > 0) throw new UsageError(`terraform export takes no files (got ${files.join(' ')})`);
    const zone = values.zone as string | undefined;
    if (!zone) throw new UsageError('terraform export needs --zone ZONE_ID');
    const provider = (values.provider as string | undefined) ?? '5';
    if (provider !== '4' && provider !== '5') throw new UsageError(`--provider must be 4 or 5 (got "${provider}")`);
    // An empty RULESMITH_API_TOKEN is unset: CLOUDFLARE_API_TOKEN is used then.
    const variable = env.RULESMITH_API_TOKEN ? 'RULESMITH_API_TOKEN' : 'CLOUDFLARE_API_TOKEN';
    const token = env.RULESMITH_API_TOKEN || env.CLOUDFLARE_API_TOKEN;
    if (!token) throw new UsageError('set RULESMITH_API_TOKEN (or CLOUDFLARE_API_TOKEN) to an API token that can read the zone');
    // Checked before it goes into a header (whose errors would print it); never shown.
    if (!/^[\x21-\x7e]+$/.test(token)) throw new InputError([`rulesmith: ${variable} is not an API token: it must be printable ASCII without spaces or line breaks (the value is not shown)`]);
    const api = ((values.api as string | undefined) ?? DEFAULT_API).replace(/\/+$/, '');
    const apiUrl = URL.canParse(api) ? new URL(api) : undefined;
    if (!apiUrl || !/^https?:$/.test(apiUrl.protocol)) throw new UsageError(`--api takes the API's base URL, e.g. ${DEFAULT_API}`);
    // Credentials in the URL would be printed with any error that names the API (they are not shown here either).
    if (apiUrl.username || apiUrl.password) throw new InputError(['rulesmith: --api holds a user name or password; give the API\'s base URL alone (the token goes in RULESMITH_API_TOKEN)']);
    // The token would cross the network in the clear: only the local service is spoken to over http.
    if (apiUrl.protocol === 'http:' && !isLoopback(api)) {
      throw new InputError([`rulesmith: --api ${api} is plain http on another machine: the API token would travel unencrypted; use https (the local rules service on 127.0.0.1 or localhost may use http)`]);
    }
    const leftOut = (what: string) => io.err(`rulesmith terraform export: left out ${what}\n`);
    return fetchZoneRulesets(api, zone, token, leftOut).then(
      (rulesets) => {
        const version = Number(provider) as ProviderVersion;
        if (version === 4) for (const l of v4LeftOut(rulesets)) leftOut(l);
        io.out(exportTerraform(rulesets, version));
        return 0;
      },
      (e: unknown) => {
        io.err(`rulesmith terraform export: ${redact(e instanceof Error ? e.message : String(e), token)}\n`);
        return 2;
      },
    );
  }
  if (sub === 'import') {
    const { values, files } = parseOptions(rest, { out: { type: 'string' } });
    if (files.length !== 1) throw new UsageError('terraform import takes one .tf file');
    const text = readInput(io, files[0]);
    return importFile(files[0], text, io, values.out as string | undefined);
  }
  throw new UsageError(sub === undefined ? 'terraform needs a subcommand: export or import' : `unknown terraform subcommand "${sub}" (export or import)`);
}

async function importFile(file: string, text: string, io: Io, out: string | undefined): Promise<number> {
  const parsed = await parseHcl(text);
  if (!parsed.ok) {
    const line = text.slice(0, parsed.error.start).split('\n').length;
    throw new InputError([`${file}:${line}: ${parsed.error.message}`]);
  }
  const ids = importIds(parsed.json);
  // In the file's order (hcl2json sorts resources by name).
  const order = locate(text).rulesets.map((r) => r.resource);
  const imported = resourcesOf(parsed.json, 'cloudflare_ruleset')
    .map((r) => toRuleset(r, ids))
    .sort((a, b) => order.indexOf(a.resource) - order.indexOf(b.resource));
  if (imported.length === 0) throw new InputError([`${file}: no cloudflare_ruleset resource`]);
  for (const i of imported) for (const u of i.unresolved) io.err(`${file}: ${i.resource}.${u.path} depends on ${u.dependsOn.join(', ')}: ${u.leftOut ? 'left out' : 'kept as written'}\n`);
  if (out !== undefined) {
    try {
      mkdirSync(out, { recursive: true });
    } catch (e) {
      const reason = (e as NodeJS.ErrnoException).code === 'EEXIST' ? 'it is a file, not a folder (EEXIST)' : fsReason(e);
      throw new InputError([`rulesmith: cannot write ${out}: ${reason}`]);
    }
    for (const i of imported) {
      const path = join(out, `${i.resource.replace(/^cloudflare_ruleset\./, '')}.ruleset.json`);
      try {
        io.writeFile(path, `${JSON.stringify(i.ruleset, null, 2)}\n`);
      } catch (e) {
        throw new InputError([`rulesmith: cannot write ${path}: ${fsReason(e)}`]);
      }
    }
    return 0;
  }
  io.out(`${JSON.stringify(imported.length === 1 ? imported[0].ruleset : zoneFile(imported), null, 2)}\n`);
  return 0;
}

/** Error text without the API token (an API error may echo the Authorization header). */
export function redact(text: string, token: string): string {
  return token ? text.split(token).join('***') : text;
}

/** Several rulesets as a zone file: entry points by phase, custom rulesets apart; two entry points of one phase (two zones, a zone and its account) do not fit in one. */
export function zoneFile(imported: readonly ImportedRuleset[]): Record<string, unknown> {
  const entryPoints: Record<string, unknown> = {};
  const by = new Map<string, ImportedRuleset>();
  const customRulesets: unknown[] = [];
  for (const i of imported) {
    const { ruleset } = i;
    if (ruleset.kind === 'custom' || typeof ruleset.phase !== 'string') {
      customRulesets.push(ruleset);
      continue;
    }
    const before = by.get(ruleset.phase);
    if (before) {
      const where = (r: ImportedRuleset) => (r.zoneId ? `zone ${r.zoneId}` : r.accountId ? `account ${r.accountId}` : 'scope not written as a literal');
      throw new InputError([
        `rulesmith terraform import: ${before.resource} (${where(before)}) and ${i.resource} (${where(i)}) are both entry points of phase ${ruleset.phase}, and one zone file holds one entry point per phase; use --out DIR to write each resource to its own .ruleset.json`,
      ]);
    }
    by.set(ruleset.phase, i);
    entryPoints[ruleset.phase] = ruleset;
  }
  return { entryPoints, customRulesets };
}

interface Envelope<T> {
  readonly success?: boolean;
  readonly result?: T;
  readonly errors?: readonly { readonly code?: number; readonly message?: string }[];
  /** A cursor-paged list's: where the next page's cursor is (cursorPages.ts). */
  readonly result_info?: CursorInfo;
}

/** How long one request to the API may take, answer included, before the export gives up. */
const REQUEST_TIMEOUT_MS = 30_000;

/** A request the API answered with an error: `GET /path: 403 Authentication error (10000)`. */
class ApiRefused extends Error {
  constructor(
    readonly path: string,
    readonly status: number,
    why: string,
  ) {
    super(`GET ${path}: ${status} ${why}`);
  }
}

/** One request; `query` (`?per_page=50`) is left out of the messages, which name the resource as the extension's do. */
async function request<T>(api: string, path: string, token: string, query = ''): Promise<Envelope<T> & { result: T }> {
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${api}${path}${query}`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    text = await res.text();
  } catch (e) {
    if ((e as Error).name === 'TimeoutError') throw new Error(`GET ${path}: no answer from ${api} within ${REQUEST_TIMEOUT_MS / 1000} s; try again, or check --api`);
    throw new Error(`cannot reach ${api}: ${(e as Error & { cause?: Error }).cause?.message ?? (e as Error).message}`);
  }
  let body: Envelope<T> | undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Envelope<T>;
  } catch {
    // Not JSON: said below.
  }
  if (!body) {
    const type = res.headers.get('content-type') ?? 'none';
    // A refusal or a missing resource stays one (collect.ts acts on the status), in these words.
    if (res.status === 401 || res.status === 403 || res.status === 404) throw new ApiRefused(path, res.status, `${res.statusText} (an answer that is not the API's JSON, content-type ${type}: is --api the API's base URL?)`);
    throw new Error(`GET ${path}: ${res.status} ${res.statusText} from ${api}${path} is not the API's JSON (content-type ${type}): is --api the API's base URL, ending in /client/v4 (${DEFAULT_API})?`);
  }
  if (!res.ok || body.success === false || body.result === undefined) {
    const why = body.errors?.map((e) => `${e.message ?? ''}${e.code ? ` (${e.code})` : ''}`).join('; ') || res.statusText;
    throw new ApiRefused(path, res.status, why);
  }
  return body as Envelope<T> & { result: T };
}

async function get<T>(api: string, path: string, token: string): Promise<T> {
  return (await request<T>(api, path, token)).result;
}

/** The most items a page of a rulesets list holds (the API's maximum `per_page`). */
const RULESETS_PER_PAGE = 50;
/** Pages read of one list before giving up (10,000 rulesets), rather than loop on a server that never ends it. */
const MAX_PAGES = 200;

/** Every item of a cursor-paged list (the rulesets lists), pages of `per_page`: never a list cut short (cursorPages.ts). */
function getAllPages<T>(api: string, path: string, token: string): Promise<T[]> {
  return everyPage<T>(
    async (cursor) => {
      const body = await request<T[]>(api, path, token, `?per_page=${RULESETS_PER_PAGE}${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      return { items: Array.isArray(body.result) ? body.result : [], info: body.result_info };
    },
    (why) =>
      new Error(
        'tooLong' in why
          ? `GET ${path}: the list is longer than ${why.tooLong} pages of ${RULESETS_PER_PAGE}; nothing was left out silently`
          : `GET ${path}: the API returned the cursor "${why.repeated.slice(0, 40)}" twice; the list could not be read to its end`,
      ),
    MAX_PAGES,
  );
}

/**
 * The zone's entry points, then the custom rulesets their execute rules run, read over
 * fetch: what is read and what a refusal says is terraform/collect.ts's.
 */
export function fetchZoneRulesets(api: string, zoneId: string, token: string, leftOut?: (what: string) => void): Promise<ExportedRuleset[]> {
  const zonePath = (id: string) => `/zones/${encodeURIComponent(id)}`;
  const reader: ZoneRulesetReader = {
    listZoneRulesets: (zone) => getAllPages<RulesetSummary>(api, `${zonePath(zone)}/rulesets`, token),
    getZoneRuleset: (zone, id) => get<RulesetBody>(api, `${zonePath(zone)}/rulesets/${encodeURIComponent(id)}`, token),
    zoneAccountId: async (zone) => (await get<{ account?: { id?: string } }>(api, zonePath(zone), token)).account?.id,
    getAccountRuleset: (account, id) => get<RulesetBody>(api, `/accounts/${encodeURIComponent(account)}/rulesets/${encodeURIComponent(id)}`, token),
    status: (e) => (e instanceof ApiRefused ? e.status : undefined),
    describe: (e) => (e instanceof Error ? e.message : String(e)),
  };
  return collectZoneRulesets(reader, zoneId, leftOut);
}
