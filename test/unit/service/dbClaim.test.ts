// The claim files that keep a database to one service (service/dbClaim.ts), in the
// interleavings two services starting at once can meet, played one step at a time.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { claimFile, removeStale } from '../../../server/src/service/dbClaim';

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
