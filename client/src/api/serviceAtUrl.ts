// "Start Local Service" when rulesmith.api.baseUrl names this machine and nothing answers
// there (the `npm start` demo's service was stopped, say): runs
//   node <extension>/server/out/cli.js serve --host <host> --port <port>
//        --db <globalStorage>/rules-service-<port>.db --seed demo [--proxy-listen <rulesmith.proxy.url's>]
// with the token the extension signs in with as RULESMITH_SERVICE_TOKEN, so the same
// credentials work. It runs until the window closes (or it is stopped by its pid).
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { SERVE_READY } from '../../../server/src/serveReady';
import { spawnServe } from './spawnServe';
import { isLoopback } from '../../../server/src/loopback';

const START_TIMEOUT_MS = 20_000;

/** Host and port of a loopback base URL, or undefined. */
export function loopbackAddress(baseUrl: string): { host: string; port: number } | undefined {
  if (!isLoopback(baseUrl)) return undefined;
  const u = new URL(baseUrl);
  const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  if (u.protocol !== 'http:' || !Number.isInteger(port) || port < 1) return undefined;
  return { host: u.hostname === 'localhost' ? '127.0.0.1' : u.hostname.replace(/^\[|\]$/g, ''), port };
}

export class ServicesAtUrls implements vscode.Disposable {
  private readonly children: ChildProcess[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly output: vscode.LogOutputChannel,
  ) {}

  /** Starts the service at `baseUrl`; resolves with its URL once it listens. */
  start(baseUrl: string, token: string): Promise<string> {
    const at = loopbackAddress(baseUrl);
    if (!at) return Promise.reject(new Error(`${baseUrl} is not an http:// address on this machine; start that service where it runs`));
    const cli = this.context.asAbsolutePath(join('server', 'out', 'cli.js'));
    if (!existsSync(cli)) return Promise.reject(new Error(`the rules service is missing (${cli}); build the extension with \`npm run build\``));
    mkdirSync(this.context.globalStorageUri.fsPath, { recursive: true });
    const db = join(this.context.globalStorageUri.fsPath, `rules-service-${at.port}.db`);
    // The WAF proxy too, where rulesmith.proxy.url says it listens (the `npm start` demo's
    // settings name both): an IPv4 loopback address only, as --proxy-listen takes it.
    const proxyAt = loopbackAddress(vscode.workspace.getConfiguration('rulesmith.proxy').get<string>('url', '').trim());
    const proxyListen = proxyAt && /^127\.\d+\.\d+\.\d+$/.test(proxyAt.host) ? ['--proxy-listen', `${proxyAt.host}:${proxyAt.port}`] : [];
    const serveArgs = ['--host', at.host, '--port', String(at.port), '--db', db, '--seed', 'demo', ...proxyListen];
    const child = spawnServe(cli, serveArgs, token, (command) => this.output.info(`Starting the rules service at ${baseUrl}: ${command}`));
    this.children.push(child);
    return new Promise((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => done(new Error(`it did not say it was listening within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS);
      const done = (e: Error | undefined, url?: string) => {
        clearTimeout(timer);
        if (e) {
          if (child.exitCode === null) child.kill('SIGTERM');
          reject(e);
        } else resolve(url!);
      };
      // The demo seed prints credentials (indented lines) before it is ready: never logged.
      // Once it is, its per-request lines are read and dropped, not kept.
      let ready = false;
      child.stdout!.on('data', (b: Buffer) => {
        if (ready) return;
        out += b.toString();
        const m = SERVE_READY.exec(out);
        if (m) {
          ready = true;
          out = '';
          this.output.info(`Rules service ready at ${m[1]} (pid ${child.pid})`);
          done(undefined, m[1]);
        }
      });
      child.stderr!.on('data', (b: Buffer) => this.output.warn(`[service ${at.port}] ${b.toString().trimEnd()}`));
      child.on('error', (e) => done(e));
      child.on('exit', (code, signal) => done(new Error(`it exited (${signal ?? `code ${code}`}) before it was ready; see "Rulesmith: Show Output"`)));
    });
  }

  dispose(): void {
    for (const c of this.children.splice(0)) if (c.exitCode === null) c.kill('SIGTERM');
  }
}
