/**
 * Service tests run the real service over real HTTP on 127.0.0.1 with a temporary
 * SQLite file. `startService()` runs it in-process (fast); `spawnService()` runs the
 * built CLI (`rulesmith serve`) as a child process, for signals and crashes.
 */
import { deepStrictEqual } from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Cloudflare from 'cloudflare';
import { createService, type LegacyMode, type RunningService } from '../../server/src/service/service';
import { Store } from '../../server/src/service/store';
import { seedDemo, type SeededCredential } from '../../server/src/service/seed';
import { demoSeedSteps } from '../../server/src/service/routes/index';
import { SecurityEvents, type SecurityEventsOptions } from '../../server/src/service/events/writer';

export interface TestService {
  readonly url: string;
  readonly store: Store;
  /** The service's security events (with `startService({events})`): record into them, GraphQL reads them. */
  readonly events: SecurityEvents | undefined;
  readonly running: RunningService;
  readonly dir: string;
  /** Seeded credentials by name: `demo admin`, `demo read-only`, `<zone> WAF`, `global API key`. */
  readonly credentials: ReadonlyMap<string, string>;
  readonly adminToken: string;
  /** Request log lines the service wrote. */
  readonly log: string[];
  /** The first log line (already written or to come) that `match` accepts. */
  logLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** A raw call: returns status and the parsed body (or text). */
  call(method: string, path: string, options?: { token?: string | null; body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
  /** The official SDK pointed at this service. */
  sdk(token?: string): Cloudflare;
  close(): Promise<void>;
}

export async function startService(options: { legacy?: LegacyMode; seed?: boolean; traceTimeoutMs?: number; events?: SecurityEventsOptions; ruleCheckWorker?: boolean } = {}): Promise<TestService> {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-service-'));
  const store = new Store(join(dir, 'service.db'));
  const seeded = options.seed === false ? undefined : seedDemo(store, demoSeedSteps);
  const credentials = new Map((seeded?.credentials ?? []).map((c: SeededCredential) => [c.name, c.value]));
  const log: string[] = [];
  const waiting = new Set<(line: string) => void>();
  const write = (l: string) => {
    log.push(l);
    for (const w of waiting) w(l);
  };
  const events = options.events ? new SecurityEvents(store, options.events) : undefined;
  const running = createService({ store, legacy: options.legacy, log: write, ...(options.traceTimeoutMs ? { traceTimeoutMs: options.traceTimeoutMs } : {}), ...(events ? { events } : {}), ...(options.ruleCheckWorker === false ? { ruleCheckWorker: false } : {}) });
  await new Promise<void>((resolve) => running.server.listen(0, '127.0.0.1', resolve));
  const url = running.url();
  const adminToken = credentials.get('demo admin') ?? '';
  return {
    url,
    store,
    events,
    running,
    dir,
    credentials,
    adminToken,
    log,
    logLine(match, timeoutMs = 10_000) {
      const found = log.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(w);
          reject(new Error(`no such log line within ${timeoutMs} ms; the last ones:\n${log.slice(-5).join('\n')}`));
        }, timeoutMs);
        const w = (line: string) => {
          if (!match(line)) return;
          clearTimeout(timer);
          waiting.delete(w);
          resolve(line);
        };
        waiting.add(w);
      });
    },
    async call(method, path, o = {}) {
      const headers: Record<string, string> = { ...(o.headers ?? {}) };
      const token = o.token === undefined ? adminToken : o.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined = o.rawBody;
      if (o.body !== undefined) body = JSON.stringify(o.body);
      if (body !== undefined) headers['content-type'] ??= 'application/json';
      const res = await fetch(`${url}${path}`, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        // keep the text
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
    sdk(token = adminToken) {
      return new Cloudflare({ apiToken: token, apiKey: null, apiEmail: null, userServiceKey: null, baseURL: url, maxRetries: 0 });
    },
    async close() {
      await running.close();
      await events?.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface SpawnedService {
  readonly child: ChildProcess;
  readonly url: string;
  readonly output: () => string;
}

/** Runs `node server/out/cli.js serve` (build first) and waits for its "listening on" line. */
export function spawnService(args: readonly string[], env: Record<string, string> = {}): Promise<SpawnedService> {
  const child = spawn(process.execPath, ['server/out/cli.js', 'serve', '--port', '0', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`rulesmith serve did not start:\n${out}`)), 15_000);
    const check = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve({ child, url: m[1]!, output: () => out });
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`rulesmith serve exited with ${code}:\n${out}`));
    });
  });
}

/** The first error of a failure envelope, flattened for one deepEqual. */
export function firstError(body: any): { code: number; message: string; pointer?: string; meta?: unknown } {
  if (body?.success !== false || body.result !== null) throw new Error(`expected a failure envelope, got ${JSON.stringify(body)}`);
  const e = body.errors[0];
  return { code: e.code, message: e.message, ...(e.source ? { pointer: e.source.pointer } : {}), ...(e.meta ? { meta: e.meta } : {}) };
}

/** Every row of the legacy tables, to prove a refused request changed nothing. */
export function legacySnapshot(svc: TestService): unknown {
  return {
    filters: svc.store.all('SELECT * FROM filters ORDER BY rowid'),
    rules: svc.store.all('SELECT * FROM firewall_rules ORDER BY rowid'),
  };
}

/** Sends a request that must be refused with `status` and `expected`, leaving the legacy tables as they were. */
export async function refusedUnchanged(
  svc: TestService,
  method: string,
  path: string,
  options: Parameters<TestService['call']>[2],
  status: number,
  expected: ReturnType<typeof firstError>,
): Promise<void> {
  const before = legacySnapshot(svc);
  const res = await svc.call(method, path, options);
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  const got = firstError(res.body);
  deepStrictEqual(got, expected);
  deepStrictEqual(legacySnapshot(svc), before, 'the store is unchanged');
}
