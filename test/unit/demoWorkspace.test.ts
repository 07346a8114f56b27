// The `npm start` demo workspace lives outside the clone (no "git repository found in
// the parent folders" notice), one folder per clone, carried over from the old place once.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { demoWorkspaceDir, insideClone, makeDemoWorkspace } from '../../scripts/demo-workspace.mjs';

const ROOT = resolve(import.meta.dirname, '../..');

test('the default place: under XDG_DATA_HOME (else ~/.local/share), named for the clone, not inside it', () => {
  const a = demoWorkspaceDir({ XDG_DATA_HOME: '/data', HOME: '/home/alice' }, '/srv/clone');
  assert.match(a, /^\/data\/rulesmith-demo-[0-9a-f]{8}\/workspace$/);
  assert.match(demoWorkspaceDir({ HOME: '/home/alice' }, '/srv/clone'), /^\/home\/alice\/\.local\/share\/rulesmith-demo-[0-9a-f]{8}\/workspace$/);
  // Another clone, another folder; the same clone, the same folder.
  assert.notEqual(demoWorkspaceDir({ XDG_DATA_HOME: '/data' }, '/srv/other'), a);
  assert.equal(demoWorkspaceDir({ XDG_DATA_HOME: '/data' }, '/srv/clone'), a);
  assert.equal(demoWorkspaceDir({ RULESMITH_DEMO_WORKSPACE: '/tmp/ws' }), '/tmp/ws');
  assert.equal(insideClone(demoWorkspaceDir(process.env)), false);
});

test('insideClone: the clone itself and folders below it', () => {
  assert.equal(insideClone(ROOT), true);
  assert.equal(insideClone(join(ROOT, '.demo/workspace')), true);
  assert.equal(insideClone(resolve(ROOT, '..', 'elsewhere')), false);
});

test('made from examples/ once; an old workspace is carried over; edits survive', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rulesmith-demo-test-'));
  try {
    const fresh = makeDemoWorkspace(join(dir, 'a', 'workspace'));
    assert.equal(readFileSync(join(fresh, 'requests.http'), 'utf8'), readFileSync(join(ROOT, 'examples/requests.http'), 'utf8'));
    writeFileSync(join(fresh, 'requests.http'), 'edited');
    assert.equal(readFileSync(join(makeDemoWorkspace(fresh), 'requests.http'), 'utf8'), 'edited');
    const old = join(dir, 'old');
    mkdirSync(old);
    writeFileSync(join(old, 'mine.cfrule'), 'ssl');
    const moved = makeDemoWorkspace(join(dir, 'b', 'workspace'), old);
    assert.equal(readFileSync(join(moved, 'mine.cfrule'), 'utf8'), 'ssl');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
