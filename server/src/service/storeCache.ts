import type { SqlStore } from './sqlStore';

/** What storeCache keeps: a Map, or a SizedLru for what can be large. */
interface CacheLike {
  clear(): void;
  delete(key: string): unknown;
  set(key: string, ...rest: never[]): unknown;
}

/**
 * A cache per store of what the store holds. Call once per cache, at module level, with
 * what makes an empty one; the function it returns gives that cache for a store.
 *
 * Every entry set inside a write is noted (Store.cacheWritten): if that write rolls back
 * (a refused write, a dry run), just those entries go, since they may hold what it wrote.
 * Entries set outside a write, and other writes' entries, stay: a client that sends
 * refused writes cannot keep every other client's reads cold. When more than one write
 * is rolled back (a batch lost), the whole cache is emptied.
 */
export function storeCache<C extends CacheLike>(make: (store: SqlStore) => C): (store: SqlStore) => C {
  const caches = new WeakMap<SqlStore, C>();
  return (store) => {
    let c = caches.get(store);
    if (!c) {
      const fresh = make(store);
      noteSets(store, fresh);
      caches.set(store, (c = fresh));
      store.rollbackHooks.push(() => fresh.clear());
    }
    return c;
  };
}

/**
 * Makes `cache.set` tell the store which key it set. An own property of this one object
 * shadows its class's method, so the callers keep the Map or SizedLru API they use.
 */
function noteSets(store: SqlStore, cache: CacheLike): void {
  const set = cache.set as (this: CacheLike, key: string, value?: unknown, bytes?: unknown) => unknown;
  Object.defineProperty(cache, 'set', {
    value(this: CacheLike, key: string, value?: unknown, bytes?: unknown): unknown {
      store.cacheWritten(cache, key);
      return set.call(this, key, value, bytes);
    },
  });
}
