/** The claim files the store takes when it opens a database and drops when it closes it (store.ts). */
import { closeSync, constants, linkSync, lstatSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { clearStaleLock } from './sqlite';

/**
 * One service per database file, whatever path names it. node-sqlite3-wasm locks with a
 * `<db>.lock` directory named after the path it was given, which a killed process leaves
 * behind and which a symlink or hard link to the same file does not see. So the service
 * records its pid in two claim files, both created exclusively: `<real path>.owner`
 * beside the file's resolved real path (a symlink or a case variant resolves to it), and
 * one named after the file's device and inode in /tmp (a hard link has another path but
 * the same inode; /tmp, not TMPDIR, so that every process looks in the same place). A live owner means the file is in use; a
 * dead one means its claim is stale and is cleared (SQLite then recovers from its log), and
 * so is one whose pid now names a process that is not a node or rulesmith one (the pid was
 * reused: see `alive`).
 *
 * /tmp is everyone's: the claims folder is made 0700 and used only when it is a real
 * folder of this user that no one else may write to (`claimsFolder`), and the claim files
 * are created exclusively, never through a symlink planted in their place (`claimFile`).
 * `lockDir` is the folder's path (tests name another).
 */
export function claim(file: string, lockDir = defaultClaimsFolder()): { real: string; claims: string[] } {
  // The file must exist to have an identity: an empty file is an empty database.
  closeSync(openSync(file, 'a'));
  const real = realpathSync.native(file);
  const { dev, ino } = statSync(real);
  claimsFolder(lockDir);
  const files = [`${real}.owner`, join(lockDir, `${dev}-${ino}.owner`)];
  const held: string[] = [];
  try {
    for (const f of files) {
      take(f, file, () => clearStaleLock(real));
      held.push(f);
    }
  } catch (e) {
    release(held);
    throw e;
  }
  return { real, claims: files };
}

/**
 * One folder whatever TMPDIR says (two services started with different ones must still
 * meet there), per user: another user's folder of the same name is refused (claimsFolder).
 */
export function defaultClaimsFolder(): string {
  return join(process.platform === 'win32' ? tmpdir() : '/tmp', `rulesmith-db-claims-${process.getuid?.() ?? 'user'}`);
}

/**
 * Makes the claims folder `dir` (0700), or checks the one there: anyone may create a name
 * in /tmp first, and a folder another user owns or may write to would let them plant claims
 * (a service refused as "in use") or symlinks. Throws, naming what is wrong and that the
 * folder is to be removed, unless it is a real folder (not a symlink) of this user, not
 * writable by its group or others. No check where there are no uids (Windows: the folder
 * is in the user's own TMPDIR).
 */
export function claimsFolder(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const st = lstatSync(dir);
  const wrong = st.isSymbolicLink()
    ? 'it is a symbolic link, not a folder'
    : !st.isDirectory()
      ? 'it is not a folder'
      : st.uid !== uid
        ? `it belongs to user ${st.uid}, not to this user (${uid})`
        : (st.mode & 0o022) !== 0
          ? `its group or other users may write to it (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})`
          : undefined;
  if (wrong !== undefined) {
    throw new Error(
      `the database claims folder ${dir} cannot be trusted: ${wrong} (it must be a folder of this user's that no other user may write to, or they could plant claims or links in it); remove it (rm -r ${dir}, as its owner or root) and start the service again: it makes the folder anew, mode 0700`,
    );
  }
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
 * claim half made (an empty one would look stale to it). Our own file is created
 * exclusively and without following a symlink: one planted at its name is never written
 * through (a file left there by a dead process of the same pid is removed first).
 */
export function claimFile(owner: string): boolean {
  const mine = `${owner}.${process.pid}.new`;
  writeNew(mine, String(process.pid));
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

// Create, exclusively (a symlink at the name counts as there: EEXIST), never following one.
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);

/** Writes `text` to the new file `path`; one already there (a dead process's, or planted) is removed, not written through. */
function writeNew(path: string, text: string): void {
  let fd: number;
  try {
    fd = openSync(path, CREATE_NEW, 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    rmSync(path, { force: true }); // a symlink itself, not what it names
    fd = openSync(path, CREATE_NEW, 0o644);
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
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

/**
 * Whether `pid` may still be a service holding a claim: a process of that pid exists and,
 * where its command line can be read (Linux's /proc), it is a node or rulesmith one (or
 * runs this process's executable). A pid reused by another program (a claim left by a
 * killed service, its pid since given to a shell) is not, so its claim is stale instead of
 * refusing the database until someone deletes it. Elsewhere, or when /proc cannot be
 * read, any live process counts.
 */
export function alive(pid: number, cmdlineOf: (pid: number) => string | undefined = procCmdline): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const cmdline = cmdlineOf(pid);
  if (cmdline === undefined) return true;
  const words = cmdline.toLowerCase();
  return ['node', 'rulesmith', basename(process.execPath).toLowerCase()].some((w) => words.includes(w));
}

/** The command line of `pid` (its NUL-separated words), or undefined where there is no /proc or it cannot be read. */
function procCmdline(pid: number): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1');
  } catch {
    return undefined;
  }
}
