// The Security Events view's GraphQL queries (POST /client/v4/graphql, the hosted
// Analytics shape) and the filter the view's controls build. No vscode import: unit-tested.

/** One event as the view reads it (the GraphQL field names). */
export interface SecurityEvent {
  readonly rayName: string;
  readonly datetime: string;
  readonly action: string;
  readonly source: string;
  readonly rulesetId: string;
  readonly ruleId: string;
  readonly ref: string;
  readonly description: string;
  readonly clientIP: string;
  readonly clientCountryName: string;
  readonly clientAsn: string;
  readonly clientRequestHTTPMethodName: string;
  readonly clientRequestHTTPHost: string;
  readonly clientRequestHTTPProtocol: string;
  readonly clientRequestPath: string;
  readonly clientRequestQuery: string;
  readonly userAgent: string;
  readonly edgeResponseStatus: number;
  readonly outcome: string;
  readonly ruleAction: string;
  readonly anomalyScore: number;
  /** `proxy` (live traffic) or `trace` (the service's Trace, the editor's Open included). */
  readonly origin: string;
}

export interface RuleGroup {
  readonly count: number;
  readonly dimensions: { readonly ruleId: string; readonly rulesetId: string; readonly source: string; readonly action: string; readonly description: string };
}

export interface TimelineGroup {
  readonly count: number;
  readonly dimensions: { readonly datetimeMinute?: string; readonly datetimeHour?: string; readonly action: string };
}

/** What the view's filter controls hold. */
export interface EventsFilter {
  /** How far back, in minutes (default 60). */
  readonly sinceMinutes: number;
  readonly action?: string;
  /** A path, or a LIKE pattern with `%`. */
  readonly path?: string;
  readonly ip?: string;
  /** Live traffic (`proxy`, the default) or `trace`s; undefined: both. */
  readonly origin?: 'proxy' | 'trace';
}

export const DEFAULT_FILTER: EventsFilter = { sinceMinutes: 60, origin: 'proxy' };

const EVENT_FIELDS = `rayName datetime action source rulesetId ruleId ref description clientIP clientCountryName clientAsn
  clientRequestHTTPMethodName clientRequestHTTPHost clientRequestHTTPProtocol clientRequestPath clientRequestQuery userAgent
  edgeResponseStatus outcome ruleAction anomalyScore origin`;

export const RULE_GROUPS_QUERY = `query RuleGroups($zoneTag: String!, $filter: ZoneFirewallEventsAdaptiveFilter_InputObject!) {
  viewer { zones(filter: {zoneTag: $zoneTag}) {
    firewallEventsAdaptiveGroups(limit: 100, filter: $filter, orderBy: [count_DESC]) { count dimensions { ruleId rulesetId source action description } }
  } } }`;

export const EVENTS_QUERY = `query Events($zoneTag: String!, $filter: ZoneFirewallEventsAdaptiveFilter_InputObject!, $limit: Int!) {
  viewer { zones(filter: {zoneTag: $zoneTag}) {
    firewallEventsAdaptive(limit: $limit, filter: $filter, orderBy: [datetime_DESC]) { ${EVENT_FIELDS} }
  } } }`;

/** Minutes for a window of up to 3 hours, hours beyond. */
export function timelineQuery(sinceMinutes: number): { query: string; bucket: 'datetimeMinute' | 'datetimeHour' } {
  const bucket = sinceMinutes <= 180 ? 'datetimeMinute' : 'datetimeHour';
  return {
    bucket,
    query: `query Timeline($zoneTag: String!, $filter: ZoneFirewallEventsAdaptiveFilter_InputObject!) {
  viewer { zones(filter: {zoneTag: $zoneTag}) {
    firewallEventsAdaptiveGroups(limit: 10000, filter: $filter, orderBy: [${bucket}_ASC]) { count dimensions { ${bucket} action } }
  } } }`,
  };
}

/** The GraphQL filter of the view's controls at `now` (ms). */
export function graphqlFilter(f: EventsFilter, now: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const out: Record<string, unknown> = { datetime_geq: new Date(now - f.sinceMinutes * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z'), ...extra };
  if (f.origin) out.origin = f.origin;
  if (f.action) out.action = f.action;
  if (f.ip) out.clientIP = f.ip;
  if (f.path) {
    if (f.path.includes('%')) out.clientRequestPath_like = f.path;
    else out.clientRequestPath = f.path;
  }
  return out;
}

/** "last 60 min · block · /admin%" for the view's description (live traffic unsaid: the default). */
export function describeFilter(f: EventsFilter): string {
  const since = f.sinceMinutes % 1440 === 0 ? `${f.sinceMinutes / 1440} d` : f.sinceMinutes % 60 === 0 ? `${f.sinceMinutes / 60} h` : `${f.sinceMinutes} min`;
  const origin = f.origin === 'trace' ? 'traces' : f.origin === undefined ? 'live and traces' : undefined;
  return [`last ${since}`, origin, f.action, f.path, f.ip].filter(Boolean).join(' · ');
}

/** `1h`, `30m`, `7d` → minutes; undefined for anything else. */
export function parseWindow(text: string): number | undefined {
  const m = /^\s*(\d+)\s*([mhd])\s*$/i.exec(text);
  if (!m) return undefined;
  const n = Number(m[1]) * { m: 1, h: 60, d: 1440 }[m[2]!.toLowerCase() as 'm' | 'h' | 'd'];
  return n > 0 && n <= 31 * 1440 ? n : undefined;
}
