// The connection to a rules service: which one (the setting rulesmith.api.baseUrl, or the
// local service the extension starts when it is empty), with which credentials
// (SecretStorage only; entered with "Sign In", removed with "Sign Out", verified with
// /user/tokens/verify, never logged; kept together with the base URL they were verified
// for and never sent anywhere else — a workspace's .vscode/settings.json that points
// rulesmith.api.baseUrl at another server gets no token, only a Sign In to answer),
// and the chosen account and zone (settings
// rulesmith.api.accountId / zoneId). It sets the context keys menus and welcome views use:
//   rulesmith.ready, rulesmith.signedIn, rulesmith.localService, rulesmith.zoneChosen,
//   rulesmith.zoneEnterprise, rulesmith.migrationState
import * as vscode from 'vscode';
import { ClientCache } from './clientCache';
import { RulesApiError } from './errors';
import { LocalService } from './localService';
import { RulesApi, type Credentials, type Zone } from './rulesApi';
import { envTokenAllowed, insecureBaseUrl } from './urls';

export { insecureBaseUrl } from './urls';

const CREDENTIALS_SECRET = 'rulesmith.api.credentials';
/** The user signed out of the local service: do not sign in to it automatically. */
const LOCAL_SIGNED_OUT = 'rulesmith.localService.signedOut';
/**
 * A token in the environment (RULESMITH_API_TOKEN, as the SDK reads CLOUDFLARE_API_TOKEN)
 * is used when nothing is stored — for CI and the `npm start` demo — and only for the URL
 * in RULESMITH_API_URL, or a loopback service when that is not set (urls.ts). Signing out
 * ignores it.
 */
const ENV_TOKEN = 'RULESMITH_API_TOKEN';
/** The URL that token is for; without it the token goes only to a loopback service (see urls.ts). */
const ENV_URL = 'RULESMITH_API_URL';
const ENV_SIGNED_OUT = 'rulesmith.envToken.signedOut';

export interface ConnectionState {
  readonly signedIn: boolean;
  readonly local: boolean;
  readonly baseUrl?: string;
  readonly accountId?: string;
  readonly zoneId?: string;
}

function setting<T>(name: string, fallback: T): T {
  return vscode.workspace.getConfiguration('rulesmith.api').get<T>(name, fallback) ?? fallback;
}

function normalizeBaseUrl(url: string): string {
  const u = url.trim().replace(/\/+$/, '');
  return /\/client\/v4$/.test(u) ? u : `${u}/client/v4`;
}

export class NotSignedInError extends Error {
  constructor() {
    super('You are not signed in to a rules service. Run "Rulesmith: Sign In".');
  }
}

export class Connection implements vscode.Disposable {
  /** Made again when the service URL or the credentials change (another window may sign in: clientCache.ts). */
  private readonly clients = new ClientCache<RulesApi>([CREDENTIALS_SECRET]);
  private signedIn = false;
  private zoneCache = new Map<string, Zone>();
  /** The state as last fired (JSON). */
  private announced = '';
  private readonly changed = new vscode.EventEmitter<ConnectionState>();
  private readonly disposables: vscode.Disposable[] = [];
  /** Fires on sign in/out, a change of base URL, account or zone. */
  readonly onDidChange = this.changed.event;
  readonly local: LocalService;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
  ) {
    this.local = new LocalService(context, output);
    this.disposables.push(
      this.changed,
      this.local,
      // A service started again (after a crash, a restart) listens on another port: the views follow.
      // Not on a stop: a refresh would call the service and start it again at once.
      this.local.onDidChange((info) => {
        if (info) void this.refreshState();
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('rulesmith.api')) void this.refreshState();
      }),
      context.secrets.onDidChange((e) => {
        if (!this.clients.secretChanged(e.key)) return;
        // Other credentials may see other zones.
        this.zoneCache.clear();
        void this.refreshState();
      }),
    );
  }

  get isLocal(): boolean {
    return setting('baseUrl', '').trim() === '';
  }

  get accountId(): string | undefined {
    return setting('accountId', '').trim() || undefined;
  }

  get zoneId(): string | undefined {
    return setting('zoneId', '').trim() || undefined;
  }

  state(): ConnectionState {
    return {
      signedIn: this.signedIn,
      local: this.isLocal,
      baseUrl: this.isLocal ? this.local.running?.baseUrl : normalizeBaseUrl(setting('baseUrl', '')),
      accountId: this.accountId,
      zoneId: this.zoneId,
    };
  }

  /** Works out whether we are signed in (without network calls) and updates the context keys. */
  async refreshState(): Promise<ConnectionState> {
    // Compared with the state last announced: settings are read live, so a "before" taken
    // now would already hold the new zone and nothing would fire.
    const before = this.announced;
    if (this.isLocal) this.signedIn = this.context.globalState.get<boolean>(LOCAL_SIGNED_OUT) !== true;
    else this.signedIn = (await this.storedCredentials()) !== undefined;
    await this.setContext();
    const now = this.state();
    if (JSON.stringify(now) !== before) {
      this.announced = JSON.stringify(now);
      this.clients.clear();
      this.changed.fire(now);
    }
    return now;
  }

  private async setContext(): Promise<void> {
    const set = (k: string, v: unknown) => vscode.commands.executeCommand('setContext', k, v);
    await Promise.all([set('rulesmith.signedIn', this.signedIn), set('rulesmith.localService', this.isLocal), set('rulesmith.zoneChosen', this.signedIn && this.zoneId !== undefined)]);
    // Welcome views wait for this: no "Sign In" flashes before the extension has looked.
    await set('rulesmith.ready', true);
  }

  /** The base URL of the configured (not local) service. */
  get configuredBaseUrl(): string {
    return normalizeBaseUrl(setting('baseUrl', ''));
  }

  /**
   * The stored credentials, only if they were verified for the configured base URL
   * (`forUrl` says which URL stored ones are for when they are not used).
   */
  private async storedCredentials(): Promise<Credentials | undefined> {
    const raw = await this.context.secrets.get(CREDENTIALS_SECRET);
    if (!raw) {
      this.credentialsFor = undefined;
      const env = process.env[ENV_TOKEN]?.trim();
      const allowed = envTokenAllowed(this.configuredBaseUrl, process.env[ENV_URL]);
      return env && allowed && this.context.globalState.get<boolean>(ENV_SIGNED_OUT) !== true ? { kind: 'token', token: env } : undefined;
    }
    try {
      const c = JSON.parse(raw) as Credentials & { baseUrl?: unknown };
      if (c.baseUrl !== this.configuredBaseUrl) {
        this.credentialsFor = typeof c.baseUrl === 'string' ? c.baseUrl : undefined;
        return undefined;
      }
      this.credentialsFor = undefined;
      if (c.kind === 'token' && typeof c.token === 'string' && c.token) return { kind: 'token', token: c.token };
      if (c.kind === 'key' && typeof c.email === 'string' && typeof c.key === 'string' && c.email && c.key) return { kind: 'key', email: c.email, key: c.key };
    } catch {}
    return undefined;
  }

  /** The API token used for the configured service (to start that service with it), if the credentials are a token. */
  async configuredToken(): Promise<string | undefined> {
    const c = await this.storedCredentials();
    return c?.kind === 'token' ? c.token : undefined;
  }

  /** The token the service accepts (for the WAF proxy's control API), when signed in with one. */
  async bearerToken(): Promise<string | undefined> {
    if (this.isLocal) return this.signedIn ? (await this.local.ensure()).token : undefined;
    return this.configuredToken();
  }

  /** When the stored credentials are for another base URL than the configured one: that URL. */
  credentialsFor: string | undefined;

  private makeApi(baseUrl: string, credentials: Credentials, local: boolean): RulesApi {
    return new RulesApi({
      baseUrl,
      credentials,
      local,
      ...(this.accountId ? { accountId: this.accountId } : {}),
      timeoutMs: Math.max(1, setting('timeoutSeconds', 30)) * 1000,
      maxRetries: Math.max(0, setting('maxRetries', 2)),
      log: (line) => this.output.debug(`[api] ${line}`),
    });
  }

  /** The API client for the current service and credentials; starts the local service when needed. */
  async api(): Promise<RulesApi> {
    if (!this.signedIn) await this.refreshState();
    if (!this.signedIn) throw new NotSignedInError();
    if (this.isLocal) {
      const info = await this.local.ensure();
      const credentials: Credentials = { kind: 'token', token: info.token };
      let made = false;
      const client = this.clients.get(`local ${info.baseUrl}`, credentials, () => {
        made = true;
        return this.makeApi(info.baseUrl, credentials, true);
      });
      if (made) {
        // The state's baseUrl changed (a new port).
        this.announced = JSON.stringify(this.state());
        this.changed.fire(this.state());
      }
      return client;
    }
    const creds = await this.storedCredentials();
    if (!creds) {
      this.signedIn = false;
      await this.setContext();
      throw new NotSignedInError();
    }
    const baseUrl = normalizeBaseUrl(setting('baseUrl', ''));
    const insecure = insecureBaseUrl(baseUrl);
    if (insecure) throw new RulesApiError('connect', 0, [{ message: insecure }], 'Use an https:// URL (http:// only for 127.0.0.1 / localhost).');
    return this.clients.get(baseUrl, creds, () => this.makeApi(baseUrl, creds, false));
  }

  /**
   * Signs in: for the local service with its own token (nothing to enter); otherwise with
   * the given credentials, which are verified first and stored only when they work.
   * Returns the verification's status; throws RulesApiError when refused.
   */
  async signIn(credentials?: Credentials): Promise<{ status: string; local: boolean }> {
    if (this.isLocal && !credentials) {
      await this.context.globalState.update(LOCAL_SIGNED_OUT, undefined);
      this.signedIn = true;
      const api = await this.api();
      const r = await api.verify();
      await this.refreshState();
      return { status: r.status, local: true };
    }
    if (!credentials) throw new Error('credentials are needed to sign in to the rules service at rulesmith.api.baseUrl');
    const baseUrl = this.isLocal ? (await this.local.ensure()).baseUrl : normalizeBaseUrl(setting('baseUrl', ''));
    const insecure = insecureBaseUrl(baseUrl);
    if (insecure) throw new RulesApiError('sign in', 0, [{ message: insecure }], 'Use an https:// URL (http:// only for 127.0.0.1 / localhost); nothing was sent.');
    const probe = this.makeApi(baseUrl, credentials, this.isLocal);
    const r = await probe.verify();
    if (this.isLocal) {
      throw new RulesApiError('sign in', 0, [{ message: 'the local rules service is used with its own token' }], 'Set rulesmith.api.baseUrl to use another service with these credentials.');
    }
    // Bound to the URL they were verified at: never sent to another one.
    await this.context.secrets.store(CREDENTIALS_SECRET, JSON.stringify({ ...credentials, baseUrl }));
    await this.context.globalState.update(ENV_SIGNED_OUT, undefined);
    this.clients.clear();
    this.signedIn = true;
    await this.refreshState();
    return { status: r.status, local: false };
  }

  async signOut(): Promise<void> {
    if (this.isLocal) await this.context.globalState.update(LOCAL_SIGNED_OUT, true);
    else {
      await this.context.secrets.delete(CREDENTIALS_SECRET);
      await this.context.globalState.update(ENV_SIGNED_OUT, true);
    }
    this.clients.clear();
    this.signedIn = false;
    this.zoneCache.clear();
    await this.refreshState();
    this.announced = JSON.stringify(this.state());
    this.changed.fire(this.state());
  }

  /** Chooses the zone (and its account) for the commands and views; kept in the workspace settings. */
  async chooseZone(zone: Zone | undefined): Promise<void> {
    const cfg = vscode.workspace.getConfiguration('rulesmith.api');
    const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
    if (zone) this.zoneCache.set(zone.id, zone);
    if (zone?.account?.id && zone.account.id !== this.accountId) await cfg.update('accountId', zone.account.id, target);
    await cfg.update('zoneId', zone?.id ?? '', target);
    await this.refreshState();
  }

  /** The chosen zone's details (cached), or undefined when none is chosen. */
  async chosenZone(refresh = false): Promise<Zone | undefined> {
    const id = this.zoneId;
    if (!id) return undefined;
    return this.zone(id, refresh);
  }

  async zone(id: string, refresh = false): Promise<Zone> {
    const cached = this.zoneCache.get(id);
    if (cached && !refresh) return cached;
    const z = await (await this.api()).getZone(id);
    this.zoneCache.set(id, z);
    await vscode.commands.executeCommand('setContext', 'rulesmith.zoneEnterprise', id === this.zoneId && isEnterprise(z));
    return z;
  }

  /** Records the chosen zone's migration state for menus (`rulesmith.migrationState`). */
  async setMigrationState(zoneId: string, state: string | undefined): Promise<void> {
    if (zoneId === this.zoneId) await vscode.commands.executeCommand('setContext', 'rulesmith.migrationState', state ?? '');
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

export function isEnterprise(zone: Zone | undefined): boolean {
  const p = `${zone?.plan?.id ?? ''} ${zone?.plan?.name ?? ''}`.toLowerCase();
  return /enterprise|\bent\b/.test(p);
}

/** The plan as the language core names it (free, pro, business, enterprise), if recognised. */
export function planOf(zone: Zone | undefined): 'free' | 'pro' | 'business' | 'enterprise' | undefined {
  const p = `${zone?.plan?.name ?? ''} ${zone?.plan?.id ?? ''}`.toLowerCase();
  if (/enterprise|\bent\b/.test(p)) return 'enterprise';
  if (/business|\bbiz\b/.test(p)) return 'business';
  if (/\bpro\b/.test(p)) return 'pro';
  if (/free/.test(p)) return 'free';
  return undefined;
}
