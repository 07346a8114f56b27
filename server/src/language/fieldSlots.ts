/**
 * Field values with an array beside the map: every field name gets a process-wide slot
 * number, and a `FieldMap` keeps each value at its slot as well as under its name. Generated
 * filter code (codegen.ts) reads `slots[n]`, an array load, where `get(name)` is a hash
 * lookup that costs more than the comparison it feeds; any other ReadonlyMap still works,
 * through `get`.
 */
import type { Value } from './ir';

const SLOTS = new Map<string, number>();

/** The slot of a field name, allocated on first use. */
export function slotOf(name: string): number {
  let slot = SLOTS.get(name);
  if (slot === undefined) SLOTS.set(name, (slot = SLOTS.size));
  return slot;
}

/**
 * A Map of field values that also keeps them by slot. The engine reads only the slots, so
 * the Map itself is filled on its first use (iteration, size, delete): a live request's
 * ~70 fields are not hashed into a table nobody reads. `get` and `has` read the slots.
 */
export class FieldMap extends Map<string, Value> {
  readonly slots: (Value | undefined)[];
  /** Names set since the Map was last brought up to date, in order; undefined once it is. */
  private unsynced: string[] | undefined = [];

  constructor() {
    super();
    this.slots = new Array<Value | undefined>(SLOTS.size).fill(undefined);
  }

  override set(name: string, value: Value): this {
    const slot = slotOf(name);
    if (this.unsynced === undefined) super.set(name, value);
    else if (this.slots[slot] === undefined) this.unsynced.push(name);
    this.slots[slot] = value;
    return this;
  }

  override get(name: string): Value | undefined {
    const slot = SLOTS.get(name);
    return slot === undefined ? undefined : this.slots[slot];
  }

  override has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  override get size(): number {
    this.synced();
    return super.size;
  }

  override delete(name: string): boolean {
    this.synced();
    const slot = SLOTS.get(name);
    if (slot !== undefined) this.slots[slot] = undefined;
    return super.delete(name);
  }

  override clear(): void {
    this.slots.fill(undefined);
    this.unsynced = [];
    super.clear();
  }

  override forEach(fn: (value: Value, key: string, map: Map<string, Value>) => void, thisArg?: unknown): void {
    this.synced();
    super.forEach(fn, thisArg);
  }

  override keys(): MapIterator<string> {
    this.synced();
    return super.keys();
  }

  override values(): MapIterator<Value> {
    this.synced();
    return super.values();
  }

  override entries(): MapIterator<[string, Value]> {
    this.synced();
    return super.entries();
  }

  override [Symbol.iterator](): MapIterator<[string, Value]> {
    this.synced();
    return super.entries();
  }

  /** Fills the Map with the values set since it was last up to date. */
  private synced(): void {
    const names = this.unsynced;
    if (names !== undefined) {
      this.unsynced = undefined;
      for (const n of names) super.set(n, this.slots[SLOTS.get(n)!]!);
    }
  }
}
