// Starting the local rules service (`rulesmith serve`) and waiting until it listens: the one
// way `npm start`, the code-server e2e (test/e2e/vscode.test.ts) and the desktop e2e
// (scripts/test-desktop.mjs) run it, with the Node flags every launcher gives it
// (server/src/serveNodeFlags.json).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import SERVE_NODE_FLAGS from '../server/src/serveNodeFlags.json' with { type: 'json' };
import READY_LINES from '../server/src/serveReady.json' with { type: 'json' };

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// The lines serve prints once each listener is up: serveReady.ts's SERVE_READY and PROXY_READY,
// built here from the same JSON (a script cannot import TypeScript).
const API_LINE = new RegExp(`${READY_LINES.api}(${READY_LINES.apiUrl})`);
const PROXY_LINE = new RegExp(`${READY_LINES.proxy}(${READY_LINES.proxyUrl})`);

/**
 * Spawns `node <flags> server/out/cli.js serve ARGS`: the child at once (so that a caller
 * stopping early can stop it), and `ready`, which resolves once it has printed its API's
 * listener (and with `--proxy-listen` its proxy's too) to the API's base URL (`…/client/v4`),
 * the proxy's URL (or undefined) and everything it printed until then; it rejects when the
 * service exits first or is not listening within `timeoutMs` (then it is stopped), with what
 * it printed. `onLine` gets each line it prints, on stdout or stderr, for as long as it runs.
 *
 * @param {readonly string[]} args
 * @param {{ env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number; onLine?: (line: string) => void }} [options]
 * @returns {{ child: import('node:child_process').ChildProcessByStdio<null, import('node:stream').Readable, import('node:stream').Readable>; ready: Promise<{ apiUrl: string; proxyUrl: string | undefined; printed: string }> }}
 */
export function startLocalService(args, { env = process.env, cwd = ROOT, timeoutMs = 60_000, onLine } = {}) {
  const child = spawn(process.execPath, [...SERVE_NODE_FLAGS, join(ROOT, 'server/out/cli.js'), 'serve', ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const wantsProxy = args.some((a) => a === '--proxy-listen' || a.startsWith('--proxy-listen='));
  const ready = new Promise((resolve, reject) => {
    let printed = '';
    let settled = false;
    const settle = (fn) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      settle(() => reject(new Error(`the rules service did not listen within ${timeoutMs / 1000} s:\n${printed}`)));
    }, timeoutMs);
    const take = (line) => {
      onLine?.(line);
      if (settled) return;
      printed += `${line}\n`;
      const api = API_LINE.exec(printed);
      const proxy = PROXY_LINE.exec(printed);
      if (api && (proxy || !wantsProxy)) settle(() => resolve({ apiUrl: api[1], proxyUrl: proxy?.[1], printed }));
    };
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding('utf8');
      let partial = '';
      stream.on('data', (text) => {
        const lines = (partial + text).split('\n');
        partial = lines.pop();
        for (const line of lines) take(line);
      });
      // A last line without its newline.
      stream.once('end', () => partial && take(partial));
    }
    child.once('error', (e) => settle(() => reject(new Error(`the rules service could not be started: ${e.message}`))));
    // 'close', not 'exit': by then both pipes are read, so the reason it stopped is in `printed`.
    child.once('close', (code, signal) => settle(() => reject(new Error(`the rules service exited (${signal ?? `code ${code}`}) before it listened:\n${printed}`))));
  });
  return { child, ready };
}
