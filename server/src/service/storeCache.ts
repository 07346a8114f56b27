import type { Store } from './store';

/**
 * A Map per store for a cache of what the store holds, emptied whenever a write rolls back
 * (the write may have cached what it wrote). Call once per cache, at module level; the
 * function it returns gives that cache's Map for a store.
 */
export function storeCache<K, V>(): (store: Store) => Map<K, V> {
  const maps = new WeakMap<Store, Map<K, V>>();
  return (store) => {
    let m = maps.get(store);
    if (!m) {
      const fresh = new Map<K, V>();
      maps.set(store, (m = fresh));
      store.rollbackHooks.push(() => fresh.clear());
    }
    return m;
  };
}
