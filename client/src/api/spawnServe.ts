/**
 * `rulesmith serve` as the extension starts it, for the local service and for a service at
 * a configured loopback URL alike: the built CLI run by the extension host's Node (plain
 * Node in code-server, Electron as Node on the desktop), with the node flags serve wants
 * (server/src/serveNodeFlags.ts) and the token it accepts in its environment.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { serveNodeFlags } from '../../../server/src/serveNodeFlags';

/** Starts `node <cli> serve <serveArgs>`; `log` hears the command line (without the token). */
export function spawnServe(cli: string, serveArgs: readonly string[], token: string, log: (line: string) => void): ChildProcess {
  const args = [...serveNodeFlags(), cli, 'serve', ...serveArgs];
  log(`node ${args.join(' ')}`);
  return spawn(process.execPath, args, {
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1', RULESMITH_SERVICE_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
