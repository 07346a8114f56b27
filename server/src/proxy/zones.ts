/**
 * Which zone a proxied request is for, and that zone's deployed configuration compiled.
 *
 * Host → zone: the Host header without its port, a trailing dot and a trailing `.localhost`
 * (browsers send `example.com.localhost` to 127.0.0.1, so a zone can be opened locally
 * without editing /etc/hosts), equal to a proxied zone's name or a host name under it; the
 * longest zone name wins; the rules see that host too (`canonicalHost`, evaluateLive.ts).
 * The zone's configuration: the service's compiled-zone cache (service/compiledZones.ts,
 * which the trace uses), keyed by the deployment key. The key is read again (a few SQL
 * queries) only when the store's write generation has moved since the last request
 * (`LiveZones`): every write bumps it, so a deploy (API write, extension deploy, migration)
 * takes effect on the next request, and the cache swaps the whole compiled zone in one step;
 * between writes a request costs no SQL.
 */
import { asciiLower } from '../language/bytes';
import type { CompiledZone } from '../rulesets/engine';
import type { DeployedZone, ZoneSource } from '../service/deployment';
import { ZONE_SELECT, type ZoneRow } from '../service/scope';
import type { Store } from '../service/store';
import { compiledZone } from '../service/compiledZones';
import { zoneOwnBodyLimit } from '../service/routes/zoneSettings';
import { deploymentKey, zoneSource } from '../service/zoneConfig';

export interface ProxyRoute {
  /** As given: the zone's name (`example.com`) or id. */
  readonly zone: string;
  /** `http://127.0.0.1:3000` (a path prefix is kept before the request's path). */
  readonly upstream: string;
}

export interface ZoneRoute {
  readonly zoneId: string;
  readonly zoneName: string;
  readonly upstream: URL;
}

/** The route's zone from the store; an error naming the zones there when there is none. */
export function resolveRoute(store: Store, route: ProxyRoute): ZoneRoute | { error: string } {
  const zone = findZone(store, route.zone);
  if (!zone) {
    const names = store.all<{ name: string }>('SELECT name FROM zones ORDER BY name LIMIT 20').map((z) => z.name);
    return { error: `--proxy ${route.zone}=…: no zone "${route.zone}" in the database (zones: ${names.join(', ') || 'none; create one first, or start with --seed demo'})` };
  }
  let upstream: URL;
  try {
    upstream = new URL(route.upstream);
  } catch {
    return { error: `--proxy ${route.zone}=${route.upstream}: the upstream must be a URL such as http://127.0.0.1:3000` };
  }
  // Credentials in the URL would be printed in the log and listed by the control API (and never sent): refused, and not echoed.
  if (upstream.username !== '' || upstream.password !== '') return { error: `--proxy ${route.zone}=…: the upstream URL holds a user name or password; give the app's address alone (the proxy sends the client's Authorization on)` };
  if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:') return { error: `--proxy ${route.zone}=${route.upstream}: the upstream must be http:// or https://` };
  if (upstream.search !== '' || upstream.hash !== '') return { error: `--proxy ${route.zone}=${route.upstream}: the upstream is a base URL (scheme, host, port and an optional path); a query or fragment would be dropped, so it is refused` };
  return { zoneId: zone.id, zoneName: zone.name, upstream };
}

/** The zone named by id or name (the id wins), or undefined. */
export function findZone(store: Store, zone: string): ZoneRow | undefined {
  return store.get<ZoneRow>(`${ZONE_SELECT} WHERE z.id = ? OR z.name = ? ORDER BY z.id = ? DESC LIMIT 1`, [zone, zone.toLowerCase(), zone]);
}

/** A Host header's host (lower-cased, without a trailing dot or `.localhost`) and its port as written, if any. */
function splitHost(hostHeader: string | undefined): { host: string; port?: string } {
  // ASCII only: the header is a binary string, and the rules read its bytes as UTF-8.
  let h = asciiLower((hostHeader ?? '').trim());
  let port: string | undefined;
  if (h.startsWith('[')) {
    const close = h.indexOf(']');
    if (h[close + 1] === ':') port = h.slice(close + 2);
    h = h.slice(0, close + 1);
  } else if (h.includes(':')) {
    const colon = h.lastIndexOf(':');
    port = h.slice(colon + 1);
    h = h.slice(0, colon);
  }
  if (h.endsWith('.')) h = h.slice(0, -1);
  if (h.endsWith('.localhost')) h = h.slice(0, -'.localhost'.length);
  return port === undefined ? { host: h } : { host: h, port };
}

/** The host part of a Host header, lower-cased, without port, trailing dot or `.localhost`: the host that chooses the zone. */
export function hostName(hostHeader: string | undefined): string {
  return splitHost(hostHeader).host;
}

/**
 * The Host header as the rules see it: the host that chose the zone (`hostName`), with the
 * port kept. `Example.COM.` or `example.com.localhost:8081` reach example.com's zone, so its
 * host rules must see `example.com` too, not a spelling they do not match.
 */
export function canonicalHost(hostHeader: string | undefined): string {
  const { host, port } = splitHost(hostHeader);
  return port === undefined ? host : `${host}:${port}`;
}

export function routeFor(routes: Iterable<ZoneRoute>, host: string): ZoneRoute | undefined {
  let best: ZoneRoute | undefined;
  for (const r of routes) {
    if ((host === r.zoneName || host.endsWith(`.${r.zoneName}`)) && (!best || r.zoneName.length > best.zoneName.length)) best = r;
  }
  return best;
}

export interface LiveZone {
  /** The deployment key it was compiled under. */
  readonly key: string;
  readonly deployed: DeployedZone;
  readonly compiled: CompiledZone;
}

/** The zone's deployed configuration, compiled (cached under its deployment key). */
export function liveZone(store: Store, zoneId: string): LiveZone {
  return compiledLiveZone(zoneId, deploymentKey(store, zoneId), () => zoneSource(store, zoneId));
}

/** The zone built from `source` and compiled (cached under `key`): the evaluation workers build theirs so. */
export function compiledLiveZone(zoneId: string, key: string, source: (() => ZoneSource) | ZoneSource): LiveZone {
  const zone = compiledZone(zoneId, key, source)!;
  return { key, deployed: zone.deployed, compiled: zone.compiled };
}

/** `liveZone` per zone, read from the store again only after a write (Store.generation). */
export class LiveZones {
  private readonly zones = new Map<string, { generation: number; zone: LiveZone }>();
  private readonly bodyLimits = new Map<string, { generation: number; limit: number | undefined }>();

  constructor(private readonly store: Store) {}

  get(zoneId: string): LiveZone {
    const generation = this.store.generation;
    const hit = this.zones.get(zoneId);
    if (hit && hit.generation === generation) return hit.zone;
    const zone = liveZone(this.store, zoneId);
    this.zones.set(zoneId, { generation, zone });
    return zone;
  }

  /**
   * The zone's own `request_body_inspection_limit`, if it set one (the trace reads it so).
   * Apart from `get`: with evaluation workers this thread never compiles the zone.
   */
  bodyLimit(zoneId: string): number | undefined {
    const generation = this.store.generation;
    const hit = this.bodyLimits.get(zoneId);
    if (hit && hit.generation === generation) return hit.limit;
    const limit = zoneOwnBodyLimit(this.store, zoneId);
    this.bodyLimits.set(zoneId, { generation, limit });
    return limit;
  }

  /** Forgets a zone no longer proxied. */
  drop(zoneId: string): void {
    this.zones.delete(zoneId);
    this.bodyLimits.delete(zoneId);
  }
}
