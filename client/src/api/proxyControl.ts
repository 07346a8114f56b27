// The WAF proxy's control API (docs/proxy.md, server/src/proxy/proxy.ts `control`): which
// zones it fronts with their live counters, start and stop one. The proxy is the one the
// local service runs (`--proxy-listen`), or the one at the setting rulesmith.proxy.url.
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
  /** The WAF's time per request for this zone, in ms (0 before a request); absent from older proxies. */
  readonly evaluation?: { readonly p50: number; readonly p99: number };
}

export class ProxyControl {
  constructor(private readonly connection: Connection) {}

  /** The proxy's URL, or undefined when there is none to talk to. */
  get url(): string | undefined {
    const configured = vscode.workspace.getConfiguration('rulesmith.proxy').get<string>('url', '').trim();
    return (configured || (this.connection.isLocal ? this.connection.local.proxyUrl : undefined))?.replace(/\/+$/, '');
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const base = this.url;
    if (!base) throw new Error('No WAF proxy: set rulesmith.proxy.url to the URL `rulesmith serve --proxy-listen` printed');
    const token = await this.connection.bearerToken();
    const service = this.connection.state().baseUrl;
    if (token) {
      const refused = service === undefined ? 'the rules service has no URL yet' : proxyTokenRefusal(base, service);
      if (refused) throw new Error(refused);
    }
    const res = await fetch(`${base}/.rulesmith/proxy${path}`, {
      method,
      // A redirect could carry the token to another host.
      redirect: 'error',
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(5_000),
    });
    const json = (await res.json()) as { success: boolean; result: T; errors?: { message: string }[] };
    if (!json.success) throw new Error(`the WAF proxy answered ${res.status}: ${json.errors?.map((e) => e.message).join('; ') ?? ''}`);
    return json.result;
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
