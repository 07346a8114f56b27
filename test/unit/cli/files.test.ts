// The CLI's file access (server/src/cli/files.ts): strict UTF-8, atomic rewrites, reasons in words.
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fsReason, readText, writeTextAtomic } from '../../../server/src/cli/files';

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-files-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('readText', () => {
  test('a byte that is not UTF-8 is an error naming it and where, never replaced', () => {
    const f = join(dir, 'latin1.cfrule');
    writeFileSync(f, Buffer.from('http.host eq "caf\xe9"', 'latin1'));
    assert.throws(() => readText(f), { message: 'not UTF-8 (byte 0xe9 at offset 17); save it as UTF-8' });
    assert.equal(fsReason((() => { try { readText(f); } catch (e) { return e; } })()), 'not UTF-8 (byte 0xe9 at offset 17); save it as UTF-8');
  });

  test('U+FFFD written in the file is text like any other; a byte-order mark is dropped', () => {
    const f = join(dir, 'ok.cfrule');
    writeFileSync(f, '\uFEFFhttp.host eq "\uFFFD"');
    assert.equal(readText(f), 'http.host eq "\uFFFD"');
  });
});

describe('writeTextAtomic', () => {
  test('replaces the content, keeps the mode, leaves no temporary file', () => {
    const f = join(dir, 'mode.cfrule');
    writeFileSync(f, 'old');
    chmodSync(f, 0o640);
    writeTextAtomic(f, 'new\n');
    assert.equal(readFileSync(f, 'utf8'), 'new\n');
    assert.equal(statSync(f).mode & 0o777, 0o640);
    assert.deepEqual(readdirSync(dir).filter((n) => n.includes('rulesmith-tmp')), []);
  });

  test('through a symlink: the target changes, the link stays a link', () => {
    const target = join(dir, 'target.cfrule');
    const link = join(dir, 'link.cfrule');
    writeFileSync(target, 'old');
    symlinkSync(target, link);
    writeTextAtomic(link, 'new\n');
    assert.equal(lstatSync(link).isSymbolicLink(), true);
    assert.equal(readFileSync(target, 'utf8'), 'new\n');
  });

  test('a failed write (here the rename: the path is a folder) leaves what was there and no temporary file', () => {
    const folder = join(dir, 'folder.cfrule');
    mkdirSync(folder);
    writeFileSync(join(folder, 'inside'), 'kept');
    assert.throws(() => writeTextAtomic(folder, 'new'), (e: NodeJS.ErrnoException) => fsReason(e) === 'it is a folder, not a file (EISDIR)');
    assert.deepEqual(readdirSync(folder), ['inside']);
    assert.deepEqual(readdirSync(dir).filter((n) => n.includes('rulesmith-tmp')), []);
  });
});
