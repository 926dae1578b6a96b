/**
 * Block hash → block id, as an open-addressing table over typed arrays. Block hashes are
 * 53-bit doubles; in a `Map` every one of them is a boxed heap number, and registering and
 * evicting over a million blocks per simulated hour made Map upkeep and its garbage the
 * engine's largest cost (profiled with scripts/bench-engine.ts). Each block holds at most one
 * hash, so the table never holds more than `maxEntries` keys and needs no resizing.
 *
 * Linear probing with backward-shift deletion (no tombstones), load factor ≤ 1/2.
 */

export interface HashIndex {
  readonly size: number;
  /** Value stored for `key`, or −1. */
  get(key: number): number;
  /** Insert; false (nothing changed) when `key` is already present. */
  add(key: number, value: number): boolean;
  delete(key: number): boolean;
  clear(): void;
}

const EMPTY = -1;

export function createHashIndex(maxEntries: number): HashIndex {
  let capacity = 16;
  while (capacity < 2 * maxEntries) capacity *= 2;
  const mask = capacity - 1;
  const keys = new Float64Array(capacity);
  const values = new Int32Array(capacity).fill(EMPTY);
  let size = 0;

  // Block hashes are already uniformly mixed: their low bits index the table directly.
  const home = (key: number) => (key >>> 0) & mask;

  const find = (key: number): number => {
    for (let i = home(key); values[i] !== EMPTY; i = (i + 1) & mask) {
      if (keys[i] === key) return i;
    }
    return -1;
  };

  return {
    get size() {
      return size;
    },
    get(key) {
      const i = find(key);
      return i < 0 ? EMPTY : values[i];
    },
    add(key, value) {
      let i = home(key);
      for (; values[i] !== EMPTY; i = (i + 1) & mask) if (keys[i] === key) return false;
      if (size >= maxEntries) throw new RangeError(`hash index full (${maxEntries} entries)`);
      keys[i] = key;
      values[i] = value;
      size++;
      return true;
    },
    delete(key) {
      let hole = find(key);
      if (hole < 0) return false;
      size--;
      // Shift later members of the probe run back so lookups never stop at a false gap.
      for (let j = (hole + 1) & mask; values[j] !== EMPTY; j = (j + 1) & mask) {
        const h = home(keys[j]);
        const movable = hole <= j ? h <= hole || h > j : h <= hole && h > j;
        if (movable) {
          keys[hole] = keys[j];
          values[hole] = values[j];
          hole = j;
        }
      }
      values[hole] = EMPTY;
      return true;
    },
    clear() {
      values.fill(EMPTY);
      size = 0;
    },
  };
}
