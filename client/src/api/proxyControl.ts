// The WAF proxy's control API (docs/proxy.md, server/src/proxy/proxy.ts `control`): which
// zones it fronts with their live counters, start and stop one. The proxy is the one the
// local service runs (`--proxy-listen`), or the one at the setting rulesmith.proxy.url.
import { connectionErrorCode } from './errors';
import * as vscode from 'vscode';
import type { Connection } from './connection';
import { proxyTokenRefusal } from './urls';

export interface ProxiedZone {
  readonly zone: string;
  readonly zoneId: string;
  readonly upstream: string;
  readonly url: string;
  readonly requests: number;
  readonly blocked: number;
  readonly challenged: number;
  readonly forwarded: number;
  readonly upstreamErrors: number;
  /** 503s the proxy gave without evaluating or forwarding (a full queue, a hung worker, the rules store failed); absent from older proxies. */
  readonly unavailable?: number;
  /** The WAF's time per request for this zone, in ms (0 before a request); absent from older proxies. With `evaluating`, the part spent evaluating (the rest: waiting for an evaluation worker); absent from older proxies. */
  readonly evaluation?: { readonly p50: number; readonly p99: number; readonly evaluating?: { readonly p50: number; readonly p99: number } };
}

/** How long a control call may take (the Zones view polls every few seconds). */
const TIMEOUT_MS = 5_000;

export class ProxyControl {
  constructor(private readonly connection: Connection) {}

  /** The proxy's URL, or undefined when there is none to talk to. */
  get url(): string | undefined {
    const configured = vscode.workspace.getConfiguration('rulesmith.proxy').get<string>('url', '').trim();
    return (configured || (this.connection.isLocal ? this.connection.local.proxyUrl : undefined))?.replace(/\/+$/, '');
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    // The token first: for the local service it starts the service if it is down, and a
    // service started again listens on another port (so the URL is read after it).
    const token = await this.connection.bearerToken();
    const base = this.url;
    if (!base) throw new Error(this.connection.isLocal ? 'the local rules service runs no WAF proxy; run "Rulesmith: Restart Local Service", or set rulesmith.proxy.url' : 'No WAF proxy: set rulesmith.proxy.url to the URL `rulesmith serve --proxy-listen` printed');
    const service = this.connection.state().baseUrl;
    if (token) {
      const refused = service === undefined ? 'the rules service has no URL yet' : proxyTokenRefusal(base, service);
      if (refused) throw new Error(refused);
    }
    const where = `the WAF proxy at ${base}`;
    let res: Response;
    try {
      res = await fetch(`${base}/.rulesmith/proxy${path}`, {
        method,
        // A redirect could carry the token to another host.
        redirect: 'error',
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (e) {
      const cause = fetchFailure(e);
      throw new Error(`${where} cannot be reached (${cause}): is \`rulesmith serve\` running with --proxy-listen there? Check rulesmith.proxy.url`);
    }
    let json: { success?: boolean; result?: T; errors?: { message: string }[] };
    try {
      json = (await res.json()) as typeof json;
    } catch {
      throw new Error(`${where} answered ${res.status} without JSON: is rulesmith.proxy.url the proxy's URL (the one \`rulesmith serve --proxy-listen\` printed), not the app's or the API's?`);
    }
    if (json.success !== true) {
      const why = json.errors?.map((e) => e.message).join('; ') || 'no reason given';
      throw new Error(`${where} answered ${res.status}: ${why}${res.status === 401 || res.status === 403 ? ' (its control API takes the API token the extension signs in with)' : ''}`);
    }
    return json.result as T;
  }

  async zones(): Promise<ProxiedZone[]> {
    return (await this.call<{ zones: ProxiedZone[] }>('GET', '')).zones;
  }

  start(zone: string, upstream: string): Promise<ProxiedZone> {
    return this.call('PUT', `/zones/${encodeURIComponent(zone)}`, { upstream });
  }

  async stop(zone: string): Promise<void> {
    await this.call('DELETE', `/zones/${encodeURIComponent(zone)}`);
  }
}

/** What stopped a fetch, in a word where node gives one: ECONNREFUSED, a timeout, undici's reason. */
function fetchFailure(e: unknown): string {
  if ((e as Error).name === 'TimeoutError') return `no answer within ${TIMEOUT_MS / 1000} s`;
  // The system error's code as the API client reads it (errors.ts), else undici's reason.
  return connectionErrorCode(e) ?? (e as { cause?: { message?: string } }).cause?.message ?? (e as Error).message;
}
