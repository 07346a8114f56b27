// The demo workspace: what `npm start` opens and what the real-VS-Code test opens to check
// that every request of the demo evaluates on first use. One function, so that the test
// sees exactly what a person sees.
//
// It lives outside the clone ($XDG_DATA_HOME or ~/.local/share, rulesmith-demo-<hash of
// the clone's path>/workspace): inside it, VS Code's Git support finds the clone's
// repository in a parent folder and says so ("A git repository was found in the parent
// folders of the workspace…") on every start. RULESMITH_DEMO_WORKSPACE overrides the place.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative, resolve, isAbsolute } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

/** Where `npm start` keeps the demo workspace: outside `root` (a folder per clone). */
export function demoWorkspaceDir(env = process.env, root = ROOT) {
  if (env.RULESMITH_DEMO_WORKSPACE) return resolve(env.RULESMITH_DEMO_WORKSPACE);
  const data = env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local', 'share');
  const id = createHash('sha256').update(root).digest('hex').slice(0, 8);
  return join(data, `rulesmith-demo-${id}`, 'workspace');
}

/** Whether `dir` is inside `root` (then a parent folder's Git repository shows). */
export function insideClone(dir, root = ROOT) {
  const rel = relative(root, resolve(dir));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Makes the demo workspace at `dest` (a copy of examples/: rulesets, `.cfrule` files, the
 * `.http` requests, and examples/mistakes/ with the deliberate mistakes), unless it exists:
 * a person's edits survive restarts. `previous`: where an older version kept it (copied
 * over once, so those edits survive the move). Returns `dest`.
 */
export function makeDemoWorkspace(dest, previous) {
  if (!existsSync(dest)) {
    mkdirSync(resolve(dest, '..'), { recursive: true });
    cpSync(previous && existsSync(previous) ? previous : join(ROOT, 'examples'), dest, { recursive: true });
  }
  return dest;
}
