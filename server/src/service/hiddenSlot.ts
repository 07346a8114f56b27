/**
 * A value kept on an object under a symbol, as a property that is not enumerable: JSON,
 * spreads, `Object.keys` and deep equality do not see it, and a copy of the object does not
 * carry it. What the store knows of the rule and ruleset objects it makes (their JSON,
 * their content hash) lives in such slots rather than in WeakMaps: every write makes new
 * objects, and a WeakMap of objects that die young makes each young-generation collection
 * process its entries (in a script of 3 million such entries, scavenges took 17.8 ms
 * against 1.6 ms with the property; docs/service.md "WeakMaps of young objects").
 */
export interface HiddenSlot<T> {
  get(o: unknown): T | undefined;
  set(o: object, value: T): void;
}

export function hiddenSlot<T>(name: string): HiddenSlot<T> {
  const key = Symbol(name);
  return {
    get: (o) => (o !== null && typeof o === 'object' ? (o as Record<symbol, T | undefined>)[key] : undefined),
    set: (o, value) => void Object.defineProperty(o, key, { value, writable: true, configurable: true, enumerable: false }),
  };
}
