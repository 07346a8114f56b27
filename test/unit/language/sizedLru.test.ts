import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SizedLru } from '../../../server/src/language/sizedLru';

describe('SizedLru: a cache bounded by bytes', () => {
  it('drops the least recently used entries past its budget, a read counting as a use', () => {
    const dropped: string[] = [];
    const c = new SizedLru<number>(100, (k) => dropped.push(k));
    c.set('a', 1, 40);
    c.set('b', 2, 40);
    assert.equal(c.get('a'), 1); // a is now the most recent
    c.set('c', 3, 40); // 120 > 100: b goes
    assert.deepEqual(dropped, ['b']);
    assert.deepEqual([c.get('a'), c.get('b'), c.get('c'), c.bytes, c.size], [1, undefined, 3, 80, 2]);
  });

  it('replacing an entry counts only its new size; delete and clear free their bytes without the evict hook', () => {
    const dropped: string[] = [];
    const c = new SizedLru<string>(100, (k) => dropped.push(k));
    c.set('a', 'x', 60);
    c.set('a', 'y', 30);
    assert.deepEqual([c.get('a'), c.bytes], ['y', 30]);
    c.set('b', 'z', 50);
    c.delete('a');
    assert.deepEqual([c.bytes, c.size], [50, 1]);
    c.clear();
    assert.deepEqual([c.bytes, c.size, dropped], [0, 0, []]);
  });

  it('does not keep an entry larger than the whole budget, nor the old value under its key, and says so', () => {
    const dropped: string[] = [];
    const c = new SizedLru<string>(100, (k, v) => dropped.push(`${k}=${v}`));
    c.set('small', 's', 10);
    c.set('big', 'old', 10);
    c.set('big', 'new', 101);
    assert.deepEqual([c.get('big'), c.get('small'), c.bytes, dropped], [undefined, 's', 10, ['big=new']]);
  });

  it('with maxEntries, keeps at most that many; peek does not mark an entry used; oldest walks least recently used first', () => {
    const dropped: string[] = [];
    const c = new SizedLru<string>(1_000, (k) => dropped.push(k), 2);
    c.set('a', 'A', 1);
    c.set('b', 'B', 1);
    assert.equal(c.peek('a'), 'A');
    c.set('c', 'C', 1);
    assert.deepEqual([[...c.oldest()], dropped], [[['b', 'B'], ['c', 'C']], ['a']]);
    c.get('b');
    assert.deepEqual([...c.oldest()].map(([k]) => k), ['c', 'b']);
  });
});
