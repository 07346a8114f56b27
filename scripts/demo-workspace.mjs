// The demo workspace: what `npm start` opens (in .demo/workspace) and what the real-VS-Code
// test opens to check that every request of the demo evaluates on first use. One function,
// so that the test sees exactly what a person sees.
import { cpSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

/**
 * Makes the demo workspace at `dest` (a copy of examples/: rulesets, `.cfrule` files, the
 * `.http` requests, and examples/mistakes/ with the deliberate mistakes), unless it exists:
 * a person's edits survive restarts. Returns `dest`.
 */
export function makeDemoWorkspace(dest) {
  if (!existsSync(dest)) cpSync(join(ROOT, 'examples'), dest, { recursive: true });
  return dest;
}
