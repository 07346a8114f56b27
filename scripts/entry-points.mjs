// The build's check that every esbuild entry point exists: a renamed or deleted source is a
// build error naming it, never a silently missing bundle.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** Throws, naming each missing one, unless every entry point of `entries` exists under `root`. */
export function checkEntryPoints(entries, root = '.') {
  const missing = entries.flatMap((e) => e.entryPoints).filter((p) => !existsSync(join(root, p)));
  if (missing.length > 0) {
    throw new Error(
      `entry point${missing.length > 1 ? 's' : ''} not found: ${missing.join(', ')} ` +
        '(listed in scripts/build.mjs: fix the path there, or remove the entry)',
    );
  }
}
