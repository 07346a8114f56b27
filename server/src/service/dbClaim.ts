/** The claim files the store takes when it opens a database and drops when it closes it (store.ts). */
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One service per database file, whatever path names it. node-sqlite3-wasm locks with a
 * `<db>.lock` directory named after the path it was given, which a killed process leaves
 * behind and which a symlink or hard link to the same file does not see. So the service
 * records its pid in two claim files, both created exclusively: `<real path>.owner`
 * beside the file's resolved real path (a symlink or a case variant resolves to it), and
 * one named after the file's device and inode in /tmp (a hard link has another path but
 * the same inode; /tmp, not TMPDIR, so that every process looks in the same place). A live owner means the file is in use; a
 * dead one means its claim is stale and is cleared (SQLite then recovers from its log).
 */
export function claim(file: string): { real: string; claims: string[] } {
  // The file must exist to have an identity: an empty file is an empty database.
  closeSync(openSync(file, 'a'));
  const real = realpathSync.native(file);
  const { dev, ino } = statSync(real);
  // One folder whatever TMPDIR says (two services started with different ones must still
  // meet there), per user: another user's folder of the same name would not be writable.
  const lockDir = join(process.platform === 'win32' ? tmpdir() : '/tmp', `rulesmith-db-claims-${process.getuid?.() ?? 'user'}`);
  mkdirSync(lockDir, { recursive: true });
  const files = [`${real}.owner`, join(lockDir, `${dev}-${ino}.owner`)];
  const held: string[] = [];
  try {
    for (const f of files) {
      take(f, file, () => rmSync(`${real}.lock`, { recursive: true, force: true }));
      held.push(f);
    }
  } catch (e) {
    release(held);
    throw e;
  }
  return { real, claims: files };
}

/** Creates `owner` with this pid, or throws if a live process holds it; a dead one's is replaced. */
function take(owner: string, file: string, clearStale: () => void): void {
  for (let attempt = 0; ; attempt++) {
    if (claimFile(owner)) return;
    if (attempt > 2) throw new Error(`the database's claim ${owner} keeps changing hands; try again`);
    let pid = NaN;
    try {
      pid = Number(readFileSync(owner, 'utf8').trim());
    } catch {
      continue; // released meanwhile
    }
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
      throw new Error(`the database is in use by process ${pid} (another rulesmith serve?); stop it, or use another --db file (if no such process is yours, delete ${owner})`);
    }
    if (pid === process.pid) throw new Error(`the database is in use by process ${pid} (this one: ${file} is already open here under another name); close it first`);
    if (removeStale(owner, pid)) clearStale();
  }
}

/**
 * Creates `owner` holding this process's pid, whole or not at all: written to a file of
 * our own and linked into place (fails if it exists), so another process never reads a
 * claim half made (an empty one would look stale to it).
 */
export function claimFile(owner: string): boolean {
  const mine = `${owner}.${process.pid}.new`;
  writeFileSync(mine, String(process.pid));
  try {
    linkSync(mine, owner);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return false;
  } finally {
    rmSync(mine, { force: true });
  }
}

/**
 * Removes the claim of the dead process `pid`. Two processes may judge the same claim
 * stale; the first to move it aside removes it, and one that finds it has moved a live
 * claim instead (made since it looked) puts it back.
 */
export function removeStale(owner: string, pid: number): boolean {
  const aside = `${owner}.${process.pid}.stale`;
  try {
    renameSync(owner, aside);
  } catch {
    return false; // someone else moved it first
  }
  const held = Number(readFileSync(aside, 'utf8').trim());
  if (held === pid || !Number.isInteger(held)) {
    rmSync(aside, { force: true });
    return true;
  }
  try {
    linkSync(aside, owner);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    // A third service claimed the file meanwhile: the one whose claim was moved is told by nothing, so this one stops.
    throw new Error(`the database's claim ${owner} changed hands while this service started (process ${held} held it); stop the others, then start one`);
  } finally {
    rmSync(aside, { force: true });
  }
  return false;
}

export function release(claims: readonly string[]): void {
  for (const owner of claims) {
    try {
      if (Number(readFileSync(owner, 'utf8').trim()) === process.pid) rmSync(owner, { force: true });
    } catch {
      // already gone
    }
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
