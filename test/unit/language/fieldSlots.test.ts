// FieldMap fills its Map part only when something reads it as a Map; every way of reading
// it must give what a plain Map with the same calls would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FieldMap } from '../../../server/src/language/fieldSlots';
import type { Value } from '../../../server/src/language/ir';

/** The same calls on a FieldMap and on a plain Map. */
function both(calls: (m: Map<string, Value>) => void): [FieldMap, Map<string, Value>] {
  const f = new FieldMap();
  const m = new Map<string, Value>();
  calls(f);
  calls(m);
  return [f, m];
}

test('a FieldMap reads back in the order fields were first set, with later values', () => {
  const [f, m] = both((x) => {
    x.set('http.host', 'a.example');
    x.set('ip.src', 'ignored');
    x.set('http.request.uri.path', '/x');
    x.set('http.host', 'b.example');
  });
  assert.deepEqual([...f], [...m]);
  assert.deepEqual([...f], [['http.host', 'b.example'], ['ip.src', 'ignored'], ['http.request.uri.path', '/x']]);
  assert.equal(f.size, 3);
  assert.equal(f.get('http.host'), 'b.example');
  assert.equal(f.has('http.user_agent'), false);
  assert.equal(f.get('never.a.field'), undefined);
});

test('a FieldMap keeps its slots and its Map in step across set, delete and clear after a read', () => {
  const f = new FieldMap();
  f.set('http.host', 'a.example');
  f.set('http.cookie', 'c=1');
  assert.deepEqual([...f.keys()], ['http.host', 'http.cookie']);
  // Once read as a Map, later writes go straight to it.
  f.set('http.referer', 'r');
  assert.equal(f.delete('http.host'), true);
  assert.equal(f.delete('http.host'), false);
  assert.deepEqual([...f.entries()], [['http.cookie', 'c=1'], ['http.referer', 'r']]);
  assert.equal(f.get('http.host'), undefined);
  assert.deepEqual([...f.values()], ['c=1', 'r']);
  const seen: string[] = [];
  f.forEach((v, k) => seen.push(`${k}=${String(v)}`));
  assert.deepEqual(seen, ['http.cookie=c=1', 'http.referer=r']);
  f.clear();
  assert.equal(f.size, 0);
  assert.equal(f.get('http.cookie'), undefined);
  f.set('http.cookie', 'c=2');
  assert.deepEqual([...f], [['http.cookie', 'c=2']]);
});

test('a FieldMap deleted from before it was read as a Map forgets the field', () => {
  const f = new FieldMap();
  f.set('http.host', 'a.example');
  f.set('http.cookie', 'c=1');
  assert.equal(f.delete('http.host'), true);
  assert.equal(f.size, 1);
  assert.deepEqual([...f], [['http.cookie', 'c=1']]);
});
