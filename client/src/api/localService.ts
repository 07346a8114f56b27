// The local rules service, started by the extension when `rulesmith.api.baseUrl` is empty:
//   node <extension>/server/out/cli.js serve --host 127.0.0.1 --port 0
//        --db <globalStorage>/rules-service.db --seed demo
// with RULESMITH_SERVICE_TOKEN set to a random token the extension keeps in SecretStorage
// (the service grants it full access). Ready when it prints
//   rulesmith serve: listening on http://127.0.0.1:<port>/client/v4
// Its per-request log lines go to the output channel (the service never logs a token).
// SIGTERM stops it; a crash is reported and the next call starts it again.
// One database, one service: the window that starts it writes its pid, URL and proxy URL to
// <globalStorage>/rules-service.json, and other windows use that service (after checking
// it answers to the token) instead of opening the same SQLite file from a second process.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { PROXY_READY, SERVE_READY } from '../../../server/src/serveReady';
import { spawnServe } from './spawnServe';

const TOKEN_SECRET = 'rulesmith.localService.token';
const START_TIMEOUT_MS = 30_000;

export interface LocalServiceInfo {
  readonly baseUrl: string;
  readonly token: string;
  readonly pid: number;
  /** The WAF proxy's URL (docs/proxy.md); absent for a service another window started before the proxy joined the service. */
  readonly proxyUrl?: string;
  /** Started by another window (not stopped by this one). */
  readonly shared?: boolean;
}

export class LocalService implements vscode.Disposable {
  private child: ChildProcess | undefined;
  private starting: Promise<LocalServiceInfo> | undefined;
  private info: LocalServiceInfo | undefined;
  private stopping = false;
  private readonly changed = new vscode.EventEmitter<LocalServiceInfo | undefined>();
  /** Fires when the service starts (its info) or stops (undefined). */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
  ) {}

  /** The running service, started if needed. */
  ensure(): Promise<LocalServiceInfo> {
    if (this.info && this.child && this.child.exitCode === null) return Promise.resolve(this.info);
    if (this.info?.shared && alive(this.info.pid)) return Promise.resolve(this.info);
    this.info = undefined;
    this.starting ??= this.start().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private get infoPath(): string {
    return join(this.context.globalStorageUri.fsPath, 'rules-service.json');
  }

  /** The service another window started on the same database, if it runs and takes our token. */
  private async shared(token: string): Promise<LocalServiceInfo | undefined> {
    let rec: { pid?: unknown; baseUrl?: unknown; proxyUrl?: unknown };
    try {
      rec = JSON.parse(readFileSync(this.infoPath, 'utf8')) as typeof rec;
    } catch {
      return undefined;
    }
    // Our token goes only to a loopback service (the record is a file anyone with our rights could edit).
    if (typeof rec.pid !== 'number' || typeof rec.baseUrl !== 'string' || !/^http:\/\/127\.0\.0\.1:\d+\/client\/v4$/.test(rec.baseUrl) || !alive(rec.pid)) return undefined;
    try {
      const res = await fetch(`${rec.baseUrl}/user/tokens/verify`, { headers: { authorization: `Bearer ${token}` }, redirect: 'error', signal: AbortSignal.timeout(3_000) });
      if (!res.ok) return undefined;
    } catch {
      return undefined;
    }
    // Its WAF proxy (recorded since the proxy joined the service; the control API takes the same token, so loopback only too).
    const proxyUrl = typeof rec.proxyUrl === 'string' && /^http:\/\/127\.0\.0\.1:\d+$/.test(rec.proxyUrl) ? rec.proxyUrl : undefined;
    return { baseUrl: rec.baseUrl, token, pid: rec.pid, ...(proxyUrl ? { proxyUrl } : {}), shared: true };
  }

  get running(): LocalServiceInfo | undefined {
    return this.info;
  }

  /** The running service's WAF proxy URL. */
  get proxyUrl(): string | undefined {
    return this.info?.proxyUrl;
  }

  /** The token the service is started with: made once (crypto random), kept in SecretStorage. */
  async token(): Promise<string> {
    let token = await this.context.secrets.get(TOKEN_SECRET);
    if (!token) {
      token = `rsl_${randomBytes(32).toString('base64url')}`;
      await this.context.secrets.store(TOKEN_SECRET, token);
    }
    return token;
  }

  get databasePath(): string {
    return join(this.context.globalStorageUri.fsPath, 'rules-service.db');
  }

  private async start(): Promise<LocalServiceInfo> {
    const cli = this.context.asAbsolutePath(join('server', 'out', 'cli.js'));
    if (!existsSync(cli)) throw new Error(`the rules service is missing (${cli}); build the extension with \`npm run build\``);
    mkdirSync(this.context.globalStorageUri.fsPath, { recursive: true });
    const token = await this.token();
    const other = await this.shared(token);
    if (other) {
      this.output.info(`Using the local rules service another window started at ${other.baseUrl} (pid ${other.pid})`);
      this.info = other;
      this.changed.fire(other);
      return other;
    }
    const serveArgs = ['--host', '127.0.0.1', '--port', '0', '--db', this.databasePath, '--seed', 'demo', '--proxy-listen', '127.0.0.1:0'];
    const child = spawnServe(cli, serveArgs, token, (command) => this.output.info(`Starting the local rules service: ${command}`));
    this.child = child;
    this.stopping = false;
    return new Promise<LocalServiceInfo>((resolve, reject) => {
      let done = false;
      /** The API's and the proxy's URLs once their lines came (ready waits for both). */
      let apiUrl: string | undefined;
      let proxyUrl: string | undefined;
      /** A partial last line per stream: a chunk of one never joins a line of the other. */
      const buffered = { out: '', err: '' };
      let lastLines: string[] = [];
      const timer = setTimeout(() => fail(new Error(`the local rules service did not say it was listening within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
      const fail = (e: Error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (child.exitCode === null) child.kill('SIGTERM');
        reject(new Error(`${e.message}${lastLines.length ? `; its last output: ${lastLines.join(' | ')}` : ''}`));
      };
      const onLine = (line: string, stream: 'out' | 'err') => {
        if (line.trim() === '') return;
        // Before it is ready the service may print the demo seed's credentials: those lines
        // (indented) are neither logged nor kept.
        if (!done && stream === 'out' && !line.startsWith('rulesmith serve:') && !line.startsWith('rulesmith proxy:')) return;
        lastLines = [...lastLines, line].slice(-5);
        if (stream === 'err') this.output.warn(`[service] ${line}`);
        else this.output.info(`[service] ${line}`);
        const proxy = PROXY_READY.exec(line);
        if (proxy) proxyUrl = proxy[1];
        // Ready once both listeners are: serve prints its own line, then the proxy's.
        const m = SERVE_READY.exec(line);
        if (m) apiUrl = m[1];
        if (apiUrl !== undefined && proxyUrl !== undefined && !done) {
          const url = apiUrl;
          done = true;
          clearTimeout(timer);
          this.info = { baseUrl: url, token, pid: child.pid ?? 0, proxyUrl };
          try {
            writeFileSync(this.infoPath, JSON.stringify({ pid: child.pid, baseUrl: url, proxyUrl }));
          } catch (e) {
            this.output.warn(`Could not record the local rules service for other windows: ${e instanceof Error ? e.message : String(e)}`);
          }
          this.output.info(`Local rules service ready at ${url} (pid ${child.pid}), its WAF proxy at ${proxyUrl}`);
          this.changed.fire(this.info);
          resolve(this.info);
        }
      };
      const reader = (stream: 'out' | 'err') => (b: Buffer) => {
        const lines = (buffered[stream] + b.toString()).split('\n');
        buffered[stream] = lines.pop() ?? '';
        for (const l of lines) onLine(l, stream);
      };
      child.stdout!.on('data', reader('out'));
      child.stderr!.on('data', reader('err'));
      child.on('error', (e) => fail(e));
      child.on('exit', (code, signal) => {
        if (!done) fail(new Error(`the local rules service exited (${signal ?? `code ${code}`}) before it was ready`));
        this.forgetRecord(child.pid);
        if (this.child === child) {
          this.child = undefined;
          const was = this.info;
          this.info = undefined;
          if (was) {
            this.changed.fire(undefined);
            if (!this.stopping) {
              this.output.error(`The local rules service stopped unexpectedly (${signal ?? `code ${code}`}); it will be started again on the next call.`);
            }
          }
        }
      });
    });
  }

  private forgetRecord(pid: number | undefined): void {
    try {
      const rec = JSON.parse(readFileSync(this.infoPath, 'utf8')) as { pid?: unknown };
      if (rec.pid === pid) rmSync(this.infoPath, { force: true });
    } catch {}
  }

  /** Stops the service this window started (SIGTERM, then SIGKILL after 5 s); forgets a shared one. */
  async stop(): Promise<void> {
    if (this.info?.shared) {
      this.info = undefined;
      this.changed.fire(undefined);
      return;
    }
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    this.stopping = true;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }

  async restart(): Promise<LocalServiceInfo> {
    await this.stop();
    // A start the stop cut short settles (and lets go of `starting`) before a new one begins.
    await this.starting?.catch(() => undefined);
    return this.ensure();
  }

  dispose(): void {
    void this.stop();
    if (this.child?.pid !== undefined) this.forgetRecord(this.child.pid);
    this.changed.dispose();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
