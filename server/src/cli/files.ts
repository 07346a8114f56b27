/**
 * The CLI's file access (the core does no I/O): text read as strict UTF-8, files rewritten
 * atomically, and file errors in words.
 */
import { accessSync, closeSync, constants, fstatSync, fsyncSync, openSync, readFileSync, readSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** A file that is not UTF-8: reading it as UTF-8 would replace bytes (and `format` would write them back changed). */
export class NotUtf8Error extends Error {}

/** A file's (or stdin's, with 0) text; a leading byte-order mark is dropped. */
export function readText(path: string | number): string {
  const bytes = readFileSync(path);
  const text = bytes.toString('utf8');
  if (text.includes('\uFFFD')) {
    // A U+FFFD written in the file is fine; one made by decoding is not.
    const back = Buffer.from(text, 'utf8');
    let i = 0;
    while (i < bytes.length && bytes[i] === back[i]) i++;
    if (i < bytes.length) throw new NotUtf8Error(`not UTF-8 (byte 0x${bytes[i]!.toString(16).padStart(2, '0')} at offset ${i}); save it as UTF-8`);
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * A file's first `maxBytes` bytes as a binary string (one code unit per byte) and its whole
 * size: a request body file is read only as far as it is inspected, however big it is.
 */
export function readHead(path: string, maxBytes: number): { head: string; size: number } {
  const fd = openSync(path, 'r');
  try {
    const stat = fstatSync(fd);
    if (stat.isFile()) {
      const buf = Buffer.allocUnsafe(Math.min(maxBytes, stat.size));
      let n = 0;
      while (n < buf.length) {
        const got = readSync(fd, buf, n, buf.length - n, n);
        if (got === 0) break;
        n += got;
      }
      return { head: buf.subarray(0, n).toString('latin1'), size: stat.size };
    }
    // A pipe or a device has no size: stream it through one chunk, keeping only the head.
    const chunk = Buffer.allocUnsafe(1 << 16);
    const head: string[] = [];
    let kept = 0;
    let size = 0;
    for (;;) {
      const got = readSync(fd, chunk, 0, chunk.length, null);
      if (got === 0) break;
      size += got;
      if (kept < maxBytes) {
        const take = Math.min(got, maxBytes - kept);
        head.push(chunk.subarray(0, take).toString('latin1'));
        kept += take;
      }
    }
    return { head: head.join(''), size };
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces a file's content all at once: a temporary file beside it, synced, then renamed
 * over it (through a symlink to its target, keeping its mode). A failure (a full disk, a
 * read-only or immutable file) leaves the file as it was.
 */
export function writeTextAtomic(path: string, text: string): void {
  let target = path;
  let mode = 0o666;
  let exists = false;
  try {
    target = realpathSync(path);
    mode = statSync(target).mode & 0o7777;
    exists = true;
  } catch {
    // a new file
  }
  // The rename below would replace a read-only file as readily as any: refused as a write to it would be (EACCES).
  if (exists) accessSync(target, constants.W_OK);
  const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.rulesmith-tmp`);
  try {
    const fd = openSync(tmp, 'wx', mode);
    try {
      writeFileSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, target);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

const WORDS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or folder',
  EISDIR: 'it is a folder, not a file',
  ENOTDIR: 'a part of the path is not a folder',
  EACCES: 'permission denied',
  EPERM: 'not permitted (read-only or immutable?)',
  ENOSPC: 'no space left on the device',
  EROFS: 'the file system is read-only',
  EMFILE: 'too many open files',
};

/** Why a file operation failed, in words with the system's code. */
export function fsReason(e: unknown): string {
  if (e instanceof NotUtf8Error) return e.message;
  const err = e as NodeJS.ErrnoException;
  if (err?.code && WORDS[err.code]) return `${WORDS[err.code]} (${err.code})`;
  return err?.code ?? (e instanceof Error ? e.message : String(e));
}
