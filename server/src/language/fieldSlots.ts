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

/** A Map of field values that also keeps them by slot; every mutation keeps both in step. */
export class FieldMap extends Map<string, Value> {
  readonly slots: (Value | undefined)[];

  constructor() {
    super();
    this.slots = new Array<Value | undefined>(SLOTS.size).fill(undefined);
  }

  override set(name: string, value: Value): this {
    super.set(name, value);
    this.slots[slotOf(name)] = value;
    return this;
  }

  override delete(name: string): boolean {
    const slot = SLOTS.get(name);
    if (slot !== undefined) this.slots[slot] = undefined;
    return super.delete(name);
  }

  override clear(): void {
    this.slots.fill(undefined);
    super.clear();
  }
}
