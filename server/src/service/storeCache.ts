import type { Store } from './store';

/**
 * A cache per store of what the store holds, emptied whenever a write rolls back (the write
 * may have cached what it wrote). Call once per cache, at module level, with what makes an
 * empty one (a Map, or a SizedLru for what can be large); the function it returns gives
 * that cache for a store.
 */
export function storeCache<C extends { clear(): void }>(make: (store: Store) => C): (store: Store) => C {
  const caches = new WeakMap<Store, C>();
  return (store) => {
    let c = caches.get(store);
    if (!c) {
      const fresh = make(store);
      caches.set(store, (c = fresh));
      store.rollbackHooks.push(() => fresh.clear());
    }
    return c;
  };
}
