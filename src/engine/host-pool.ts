/**
 * The host-memory KV tier's block pool, after vLLM's native CPU offloading
 * (`vllm/v1/kv_offload/cpu/manager.py` and its LRU policy, `cpu/policies/lru.py`):
 *
 * - a fixed number of host blocks, each holding one GPU block's KV (all layers), keyed by the
 *   same chained prefix hash as the GPU prefix cache;
 * - a store of a key already held only refreshes it; a new key takes a free block, or evicts the
 *   least recently used key that no load is reading; when every block is being read, the store
 *   is skipped (vLLM logs that it cannot store and goes on);
 * - a lookup counts the run of consecutive held keys from a block index on; a touch refreshes a
 *   request's held keys deepest first, so a chain's root ends up the most recent and its tail
 *   is evicted first (vLLM touches every key of a request each time it looks the request up);
 * - a load pins the blocks it reads until it completes, so no store evicts them meanwhile.
 *
 * Keys are numbers (the engine's block hashes).
 */

import { createHashIndex } from "./hash-index.ts";
import { createSlotList } from "./slot-list.ts";

export interface HostPool {
  /** Host blocks in all. */
  readonly capacity: number;
  /** Blocks holding a key. */
  readonly size: number;
  has(hash: number): boolean;
  /**
   * Store one full block's key: refreshed when held; else placed in a free block, or in the
   * least recently used unpinned one (evicting its key). False when every block is pinned.
   */
  store(hash: number): boolean;
  /**
   * How many consecutive keys, `hashAt(from)`, `hashAt(from + 1)`, … up to `to` (exclusive),
   * the pool holds. Changes nothing.
   */
  count(hashAt: (index: number) => number, from: number, to: number): number;
  /** Refresh the held keys among `hashAt(from)` … `hashAt(to − 1)`, deepest first. */
  touch(hashAt: (index: number) => number, from: number, to: number): void;
  /** A load starts reading these keys (each must be held): none can be evicted until `unpin`. */
  pin(hashes: readonly number[]): void;
  unpin(hashes: readonly number[]): void;
  /** Keys evicted to make room, and stores skipped because nothing could be evicted. */
  readonly evicted: number;
  readonly skipped: number;
}

export function createHostPool(capacity: number): HostPool {
  if (!Number.isInteger(capacity) || capacity < 0)
    throw new RangeError(`a host pool holds a whole number of blocks ≥ 0, not ${capacity}`);
  // Profiled: a Map re-inserted on every refresh took most of a simulation's time, since each
  // lookup touches a whole context (thousands of keys). Slots on an intrusive list refresh in
  // O(1), and the key → slot table is the engine's typed-array hash index. The list's head is
  // the least recently used slot, its tail the most recently used.
  const slotOf = createHashIndex(Math.max(1, capacity));
  const keyOf = new Float64Array(capacity);
  const pins = new Int32Array(capacity);
  const lru = createSlotList(capacity);
  const freeSlots: number[] = [];
  for (let i = capacity - 1; i >= 0; i--) freeSlots.push(i);
  let evicted = 0;
  let skipped = 0;

  const refresh = (slot: number) => {
    if (lru.tail() === slot) return;
    lru.unlink(slot);
    lru.pushTail(slot);
  };

  /** Free the least recently used unpinned slot; -1 when all are pinned. */
  const evictOne = (): number => {
    for (let slot = lru.head(); slot !== lru.END; slot = lru.next(slot)) {
      if (pins[slot] > 0) continue;
      lru.unlink(slot);
      slotOf.delete(keyOf[slot]);
      evicted++;
      return slot;
    }
    return -1;
  };

  const slotHeld = (hash: number, what: string): number => {
    const slot = slotOf.get(hash);
    if (slot < 0) throw new Error(`${what} of a key the host pool does not hold: ${hash}`);
    return slot;
  };

  return {
    capacity,
    get size() {
      return slotOf.size;
    },
    has: (hash) => slotOf.get(hash) >= 0,
    store(hash) {
      const held = slotOf.get(hash);
      if (held >= 0) {
        refresh(held);
        return true;
      }
      const slot = freeSlots.length > 0 ? (freeSlots.pop() as number) : evictOne();
      if (slot < 0) {
        skipped++;
        return false;
      }
      keyOf[slot] = hash;
      pins[slot] = 0;
      slotOf.add(hash, slot);
      lru.pushTail(slot);
      return true;
    },
    count(hashAt, from, to) {
      let n = 0;
      while (from + n < to && slotOf.get(hashAt(from + n)) >= 0) n++;
      return n;
    },
    touch(hashAt, from, to) {
      for (let i = to - 1; i >= from; i--) {
        const slot = slotOf.get(hashAt(i));
        if (slot >= 0) refresh(slot);
      }
    },
    pin(hashes) {
      for (const h of hashes) pins[slotHeld(h, "pin")]++;
    },
    unpin(hashes) {
      for (const h of hashes) {
        const slot = slotOf.get(h);
        if (slot < 0 || pins[slot] === 0)
          throw new Error(`unpin of a key no load is reading: ${h}`);
        pins[slot]--;
      }
    },
    get evicted() {
      return evicted;
    },
    get skipped() {
      return skipped;
    },
  };
}
