/**
 * Routes: `METHOD /path/:param` patterns under `/client/v4`, matched segment by segment.
 * Parameters named in ID_PARAMS must be 32-hex ids; anything else answers the API's
 * "perhaps your object identifier is invalid" error.
 */
import { ApiError, CODES, ID, type Reply } from './api';
import type { Principal } from './auth';
import type { Json } from './body';
import type { RouteServices } from './routeServices';

export interface Ctx {
  readonly method: string;
  /** The path after `/client/v4`, without the query. */
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The parsed JSON body, `undefined` when empty. */
  readonly body: Json | undefined;
  /** Undefined only on routes registered with `{ public: true }`. */
  readonly principal: Principal;
  readonly service: RouteServices;
  /** The raw request headers (for routes that look at credentials themselves). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /**
   * Aborted when the client disconnects before its answer (long work stops then); made on
   * the first call. A method, not a getter: an object literal with a getter kept every
   * request's objects alive through V8's young-generation collections (docs/service.md,
   * "Objects promoted by a getter").
   */
  signal(): AbortSignal;
  /**
   * Charges one write to the ruleset `key` against `--ruleset-write-rate` (rateLimit.ts):
   * sets the answer's Ratelimit header, throws the 429 past the rate; nothing when the
   * limit is off. Routes call it after authorizing the write and finding its ruleset, so
   * a refused request neither uses the allowance nor tells anything about it.
   */
  chargeRulesetWrite(key: string): void;
  /**
   * Set by a handler that read only one scope's rows (`zone:<id>`, `account:<id>`) besides
   * tokens and zones: its answer then waits only for that scope's writes to be durable, not
   * for every pending write (store.ts durable()).
   */
  readScope?: string;
}

export type Handler = (ctx: Ctx) => Reply | Promise<Reply>;

export interface RouteOptions {
  /** The route authenticates by itself (token verify answers its own errors). */
  readonly public?: boolean;
  /** A legacy family: answers 410 Gone when the service runs with `--legacy sunset`. */
  readonly legacy?: 'firewall rules' | 'filters' | 'previous WAF';
}

interface Route {
  readonly method: string;
  readonly segments: readonly string[];
  /** Per segment: the parameter it names (`:zone_id` → `zone_id`), or undefined for a literal. */
  readonly params: readonly (string | undefined)[];
  readonly handler: Handler;
  readonly options: RouteOptions;
}

const ID_PARAMS = new Set(['account_id', 'zone_id', 'ruleset_id', 'rule_id', 'filter_id', 'firewall_rule_id', 'override_id']);

export interface Match {
  readonly route: Route;
  readonly params: Record<string, string>;
}

export class Router {
  /** The routes by their number of segments, each list in the order the routes were added. */
  private readonly byLength = new Map<number, Route[]>();

  add(method: string, pattern: string, handler: Handler, options: RouteOptions = {}): void {
    const segments = pattern.split('/').filter(Boolean);
    const params = segments.map((s) => (s.startsWith(':') ? s.slice(1) : undefined));
    let routes = this.byLength.get(segments.length);
    if (!routes) this.byLength.set(segments.length, (routes = []));
    routes.push({ method, segments, params, handler, options });
  }

  get(p: string, h: Handler, o?: RouteOptions): void {
    this.add('GET', p, h, o);
  }
  post(p: string, h: Handler, o?: RouteOptions): void {
    this.add('POST', p, h, o);
  }
  put(p: string, h: Handler, o?: RouteOptions): void {
    this.add('PUT', p, h, o);
  }
  patch(p: string, h: Handler, o?: RouteOptions): void {
    this.add('PATCH', p, h, o);
  }
  delete(p: string, h: Handler, o?: RouteOptions): void {
    this.add('DELETE', p, h, o);
  }

  /** The route for a request, or the API's routing error. */
  match(method: string, path: string): Match {
    const parts = path.split('/').filter(Boolean).map(safeDecode);
    let pathMatched = false;
    let badId: string | undefined;
    // This runs on every request: only the routes of the path's length are tried, and a
    // route's parameters are read only once all its literal segments matched.
    for (const route of this.byLength.get(parts.length) ?? []) {
      if (!literalsMatch(route, parts)) continue;
      const params: Record<string, string> = {};
      let idProblem = false;
      for (let i = 0; i < parts.length; i++) {
        const name = route.params[i];
        if (name === undefined) continue;
        if (ID_PARAMS.has(name) && !ID.test(parts[i]!)) idProblem = true;
        params[name] = parts[i]!;
      }
      if (idProblem) {
        badId ??= path;
        continue;
      }
      pathMatched = true;
      if (route.method === method) return { route, params };
    }
    // The hosted API's wording (its status is not captured; 405 is what the method error is).
    if (pathMatched) throw ApiError.of(405, CODES.methodNotAllowed, `Method ${method} not available for that URI.`);
    if (badId !== undefined) {
      throw new ApiError(400, [
        { code: CODES.badObjectId, message: `Could not route to ${badId}, perhaps your object identifier is invalid?` },
        { code: CODES.noRoute, message: 'No route for that URI' },
      ]);
    }
    throw ApiError.of(400, CODES.noRoute, 'No route for that URI');
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function literalsMatch(route: Route, parts: readonly string[]): boolean {
  for (let i = 0; i < parts.length; i++) {
    if (route.params[i] === undefined && route.segments[i] !== parts[i]) return false;
  }
  return true;
}
