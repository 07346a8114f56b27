// Where the challenge page sends the browser after it passes: only a path on the same host.
// And the challenges served kept for their solve's event: bounded, expiring, taken once.
import assert from 'node:assert/strict';
import { validateHeaderValue } from 'node:http';
import { describe, it } from 'node:test';
import { Clearance, CLEARANCE_COOKIE, CLEARANCE_SECONDS, MAX_PENDING_CHALLENGES, PendingChallenges, safeReturn } from '../../../server/src/proxy/clearance';

describe('safeReturn', () => {
  it('keeps a path on the same host, with its query (a backslash there too) and fragment', () => {
    const kept = ['/', '/challenge?next=1', '/a/b#c', '/%2F%2Fevil.example', '/search?q=C:\\temp', '/a%20b'];
    assert.deepEqual(kept.map(safeReturn), kept);
  });

  it('percent-encodes what a Location header could not carry as it is', () => {
    const odd = ['/é', '/\u3000', '/a?q=\u2028', '/\ufeff#\u00ff'];
    assert.deepEqual(odd.map(safeReturn), ['/%C3%A9', '/%E3%80%80', '/a?q=%E2%80%A8', '/%EF%BB%BF#%C3%BF']);
    for (const v of odd) assert.doesNotThrow(() => validateHeaderValue('location', safeReturn(v)));
  });

  it('sends anything that a browser could read as another host to /', () => {
    const leaving = ['//evil.example', '/\\evil.example', '/\t/evil.example/phish', '/\n/evil.example', '/ /evil.example', 'https://evil.example/', 'evil.example', '', null, undefined];
    assert.deepEqual(leaving.map(safeReturn), Array(leaving.length).fill('/'));
  });
});

describe('PendingChallenges', () => {
  const any = () => true;

  it('keeps at most maxEntries, dropping the oldest first', () => {
    const kept = new PendingChallenges<string>(() => 0, { maxEntries: 3, maxBytes: 1_000, ttlMs: 60_000 });
    for (const ray of ['r1', 'r2', 'r3', 'r4', 'r5']) kept.remember(ray, `v${ray}`, 10);
    assert.deepEqual([kept.size, kept.bytes], [3, 30]);
    assert.deepEqual(['r1', 'r2', 'r3', 'r4', 'r5'].map((r) => kept.take(r, any)), [undefined, undefined, 'vr3', 'vr4', 'vr5']);
    assert.deepEqual([kept.size, kept.bytes], [0, 0]);
  });

  it('keeps at most maxBytes, dropping the oldest first; one larger than the budget is not kept', () => {
    const kept = new PendingChallenges<string>(() => 0, { maxEntries: 100, maxBytes: 100, ttlMs: 60_000 });
    kept.remember('a', 'A', 40);
    kept.remember('b', 'B', 40);
    kept.remember('c', 'C', 40);
    assert.deepEqual([kept.size, kept.bytes], [2, 80]);
    kept.remember('huge', 'H', 101);
    assert.deepEqual([kept.size, kept.bytes, kept.take('huge', any), kept.take('a', any), kept.take('b', any), kept.take('c', any)], [2, 80, undefined, undefined, 'B', 'C']);
  });

  it('forgets an entry ttlMs after it was kept, and drops the expired ones first', () => {
    let t = 1_000;
    const kept = new PendingChallenges<string>(() => t, { maxEntries: 2, maxBytes: 1_000, ttlMs: 500 });
    kept.remember('old', 'O', 1);
    t = 1_400;
    kept.remember('new', 'N', 1);
    t = 1_500;
    assert.equal(kept.take('old', any), undefined);
    assert.deepEqual([kept.size, kept.bytes], [1, 1]);
    kept.remember('newer', 'R', 1);
    t = 1_899;
    assert.deepEqual([kept.take('new', any), kept.take('newer', any)], ['N', 'R']);
    // The expired entries are dropped when the next one is kept.
    kept.remember('x', 'X', 1);
    kept.remember('y', 'Y', 1);
    t = 2_399;
    kept.remember('z', 'Z', 1);
    assert.deepEqual([kept.size, kept.take('x', any), kept.take('y', any), kept.take('z', any)], [1, undefined, undefined, 'Z']);
  });

  it('is taken once, and only by whom accept takes: one it refuses stays for its own', () => {
    const kept = new PendingChallenges<{ ip: string }>(() => 0, { maxEntries: 10, maxBytes: 1_000, ttlMs: 1_000 });
    kept.remember('ray', { ip: '192.0.2.1' }, 1);
    assert.equal(kept.take('ray', (v) => v.ip === '198.51.100.9'), undefined);
    assert.deepEqual(kept.take('ray', (v) => v.ip === '192.0.2.1'), { ip: '192.0.2.1' });
    assert.equal(kept.take('ray', any), undefined);
    assert.equal(kept.take('forged', any), undefined);
  });

  it('defaults to 10,000 entries for the clearance lifetime', () => {
    let t = 0;
    const kept = new PendingChallenges<number>(() => t);
    for (let i = 0; i <= MAX_PENDING_CHALLENGES; i++) kept.remember(`r${i}`, i, 100);
    assert.deepEqual([MAX_PENDING_CHALLENGES, kept.size, kept.take('r0', any), kept.take('r1', any)], [10_000, 10_000, undefined, 1]);
    t = CLEARANCE_SECONDS * 1000 - 1;
    assert.equal(kept.take('r2', any), 2);
    t = CLEARANCE_SECONDS * 1000;
    assert.equal(kept.take('r3', any), undefined);
  });
});

describe('a challenge pass', () => {
  it('is valid for its ray id, zone and visitor until the clearance lifetime ends, and for nothing else; nothing is kept for it', () => {
    let t = 1_000_000;
    const c = new Clearance(() => t);
    const visitor = { ip: '192.0.2.1', userAgent: 'Mozilla/5.0' };
    const pass = c.passToken('zone-a', visitor, 'ray-1');
    assert.match(pass, /^\d+\.[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(
      [
        c.passValid('zone-a', visitor, 'ray-1', pass),
        c.passValid('zone-a', visitor, 'ray-2', pass),
        c.passValid('zone-b', visitor, 'ray-1', pass),
        c.passValid('zone-a', { ...visitor, ip: '192.0.2.2' }, 'ray-1', pass),
        c.passValid('zone-a', { ...visitor, userAgent: 'curl/8' }, 'ray-1', pass),
        c.passValid('zone-a', visitor, 'ray-1', null),
        c.passValid('zone-a', visitor, 'ray-1', `${pass.slice(0, -1)}x`),
        // Another proxy's key (a restart): no pass.
        new Clearance(() => t).passValid('zone-a', visitor, 'ray-1', pass),
      ],
      [true, false, false, false, false, false, false, false],
    );
    // A clearance cookie's value is no pass, nor the other way round.
    const cookie = /=([^;]+)/.exec(c.cookie('zone-a', visitor))![1]!;
    assert.equal(c.passValid('zone-a', visitor, '', cookie), false);
    assert.equal(c.valid('zone-a', visitor, `${CLEARANCE_COOKIE}=${pass}`), false);
    t += CLEARANCE_SECONDS * 1000 - 1000;
    assert.equal(c.passValid('zone-a', visitor, 'ray-1', pass), true);
    t += 1000;
    assert.equal(c.passValid('zone-a', visitor, 'ray-1', pass), false);
  });
});
