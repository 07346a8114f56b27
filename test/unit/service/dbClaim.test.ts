// The claim files that keep a database to one service (service/dbClaim.ts), in the
// interleavings two services starting at once can meet, played one step at a time.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { alive, claim, claimFile, claimsFolder, release, removeStale } from '../../../server/src/service/dbClaim';

const dir = mkdtempSync(join(tmpdir(), 'rulesmith-claim-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const deadPid = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);

describe('claim files', () => {
  it('are made whole or not at all: the pid is there the moment the file is, and a second claim fails', () => {
    const owner = join(dir, 'a.owner');
    assert.equal(claimFile(owner), true);
    assert.equal(readFileSync(owner, 'utf8'), String(process.pid));
    assert.equal(claimFile(owner), false);
    assert.equal(existsSync(`${owner}.${process.pid}.new`), false, 'no file of ours left beside it');
  });

  it("a dead process's claim is removed once, by whoever moves it aside first", () => {
    const owner = join(dir, 'b.owner');
    writeFileSync(owner, String(deadPid));
    assert.equal(removeStale(owner, deadPid), true);
    assert.equal(existsSync(owner), false);
    // The other service that judged it stale finds nothing left to remove.
    assert.equal(removeStale(owner, deadPid), false);
  });

  it('a claim made since it was judged stale is put back, not removed', () => {
    const owner = join(dir, 'c.owner');
    // Another service removed the dead claim and made its own before this one acted on what it read.
    writeFileSync(owner, '4242');
    assert.equal(removeStale(owner, deadPid), false);
    assert.equal(readFileSync(owner, 'utf8'), '4242');
  });

  it('an empty or garbled claim counts as stale', () => {
    const owner = join(dir, 'd.owner');
    writeFileSync(owner, 'not a pid');
    assert.equal(removeStale(owner, NaN), true);
    assert.equal(existsSync(owner), false);
  });
});

// The claims folder is in /tmp, where anyone may make a name first: claim() takes the
// folder's path so these tests play the other user in a folder of their own.
const posix = process.getuid !== undefined;
const untrusted = (folder: string, wrong: string) =>
  `the database claims folder ${folder} cannot be trusted: ${wrong} (it must be a folder of this user's that no other user may write to, or they could plant claims or links in it); remove it (rm -r ${folder}, as its owner or root) and start the service again: it makes the folder anew, mode 0700`;

describe('the claims folder', { skip: !posix && 'no uids here (Windows)' }, () => {
  it('is made 0700 when missing, and a claim in it is taken and released', () => {
    const folder = join(dir, 'claims-new');
    const db = join(dir, 'new.db');
    const { claims } = claim(db, folder);
    assert.equal(statSync(folder).mode & 0o777, 0o700);
    assert.equal(claims.length, 2);
    assert.equal(readFileSync(claims[1]!, 'utf8'), String(process.pid));
    assert.ok(claims[1]!.startsWith(`${folder}/`));
    release(claims);
    assert.deepEqual(claims.map((f) => existsSync(f)), [false, false]);
  });

  it('one this user made 0755 before (an older version) is used as it is', () => {
    const folder = join(dir, 'claims-0755');
    mkdirSync(folder);
    chmodSync(folder, 0o755);
    const { claims } = claim(join(dir, 'old-folder.db'), folder);
    release(claims);
  });

  it('one that others may write to is refused, naming it, what is wrong and to remove it; no claim is left', () => {
    const folder = join(dir, 'claims-0777');
    mkdirSync(folder);
    chmodSync(folder, 0o777);
    const db = join(dir, 'open.db');
    assert.throws(() => claim(db, folder), { message: untrusted(folder, 'its group or other users may write to it (mode 0777)') });
    assert.equal(existsSync(`${db}.owner`), false, 'the claim beside the file is not taken either');
    chmodSync(folder, 0o775);
    assert.throws(() => claimsFolder(folder), { message: untrusted(folder, 'its group or other users may write to it (mode 0775)') });
  });

  it('a symlink in its place is refused, even to a good folder of ours', () => {
    const real = join(dir, 'claims-real');
    mkdirSync(real, { mode: 0o700 });
    const folder = join(dir, 'claims-link');
    symlinkSync(real, folder);
    assert.throws(() => claimsFolder(folder), { message: untrusted(folder, 'it is a symbolic link, not a folder') });
  });

  it('a file in its place is refused', () => {
    const folder = join(dir, 'claims-file');
    writeFileSync(folder, '');
    assert.throws(() => claimsFolder(folder), { message: untrusted(folder, 'it is not a folder') });
  });

  it("another user's folder is refused, even 0700", { skip: process.getuid?.() !== 0 && 'needs root to give a folder to another user' }, () => {
    const folder = join(dir, 'claims-other');
    mkdirSync(folder, { mode: 0o700 });
    chownSync(folder, 65534, 65534);
    assert.throws(() => claimsFolder(folder), { message: untrusted(folder, `it belongs to user 65534, not to this user (${process.getuid!()})`) });
  });
});

describe('a claim file', () => {
  it('is never written through a symlink planted at its temporary name', { skip: !posix && 'symlinks need privileges on Windows' }, () => {
    const owner = join(dir, 'e.owner');
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'precious');
    symlinkSync(victim, `${owner}.${process.pid}.new`);
    assert.equal(claimFile(owner), true);
    assert.equal(readFileSync(victim, 'utf8'), 'precious');
    assert.equal(readFileSync(owner, 'utf8'), String(process.pid));
    assert.equal(lstatSync(owner).isSymbolicLink(), false);
    assert.equal(existsSync(`${owner}.${process.pid}.new`), false);
  });

  it("is made over a dead process's leftover temporary file of the same pid", () => {
    const owner = join(dir, 'f.owner');
    writeFileSync(`${owner}.${process.pid}.new`, '1');
    assert.equal(claimFile(owner), true);
    assert.equal(readFileSync(owner, 'utf8'), String(process.pid));
  });
});

describe('a claim whose pid is alive', () => {
  it('blocks when the process could be a service; not when its pid now runs another program', () => {
    assert.equal(alive(process.pid, () => '/usr/bin/node\0/opt/rulesmith/out/cli.js\0serve\0'), true);
    assert.equal(alive(process.pid, () => 'rulesmith\0serve\0'), true);
    assert.equal(alive(process.pid, () => '/bin/bash\0'), false);
    assert.equal(alive(process.pid, () => ''), false, 'a zombie or kernel thread');
    assert.equal(alive(process.pid, () => undefined), true, 'no /proc, or not readable: any live process counts');
    assert.equal(alive(deadPid, () => 'node\0'), false);
  });

  it('a live non-node process (pid reused) does not hold the database; a live node one does', { skip: process.platform !== 'linux' && 'reads /proc' }, async () => {
    const folder = join(dir, 'claims-reuse');
    const db = join(dir, 'reused.db');
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    const noder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      await Promise.all([once(sleeper, 'spawn'), once(noder, 'spawn')]); // both exec'd
      const first = claim(db, folder);
      release(first.claims);
      const realDb = first.real;
      writeFileSync(`${realDb}.owner`, String(sleeper.pid));
      const taken = claim(db, folder);
      assert.equal(readFileSync(`${realDb}.owner`, 'utf8'), String(process.pid), "the sleeper's claim was stale");
      release(taken.claims);
      writeFileSync(`${realDb}.owner`, String(noder.pid));
      assert.throws(() => claim(db, folder), { message: `the database is in use by process ${noder.pid} (another rulesmith serve?); stop it, or use another --db file (if no such process is yours, delete ${realDb}.owner)` });
    } finally {
      sleeper.kill();
      noder.kill();
    }
  });
});

