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
 * Keys are numbers (the engine's block hashes); insertion order of a Map is the LRU order.
 */

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
  /** key → loads reading it; iteration order is least recently used first. */
  const blocks = new Map<number, number>();
  let evicted = 0;
  let skipped = 0;

  const refresh = (hash: number) => {
    const pins = blocks.get(hash) as number;
    blocks.delete(hash);
    blocks.set(hash, pins);
  };

  /** Evict the least recently used unpinned key; false when all are pinned. */
  const evictOne = (): boolean => {
    for (const [hash, pins] of blocks) {
      if (pins > 0) continue;
      blocks.delete(hash);
      evicted++;
      return true;
    }
    return false;
  };

  return {
    capacity,
    get size() {
      return blocks.size;
    },
    has: (hash) => blocks.has(hash),
    store(hash) {
      if (blocks.has(hash)) {
        refresh(hash);
        return true;
      }
      if (capacity === 0 || (blocks.size >= capacity && !evictOne())) {
        skipped++;
        return false;
      }
      blocks.set(hash, 0);
      return true;
    },
    count(hashAt, from, to) {
      let n = 0;
      while (from + n < to && blocks.has(hashAt(from + n))) n++;
      return n;
    },
    touch(hashAt, from, to) {
      for (let i = to - 1; i >= from; i--) {
        const hash = hashAt(i);
        if (blocks.has(hash)) refresh(hash);
      }
    },
    pin(hashes) {
      for (const h of hashes) {
        const pins = blocks.get(h);
        if (pins === undefined) throw new Error(`pin of a key the host pool does not hold: ${h}`);
        blocks.set(h, pins + 1);
      }
    },
    unpin(hashes) {
      for (const h of hashes) {
        const pins = blocks.get(h);
        if (pins === undefined || pins === 0)
          throw new Error(`unpin of a key no load is reading: ${h}`);
        blocks.set(h, pins - 1);
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
