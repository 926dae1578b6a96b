/**
 * Request-level KV operations over the block pool, after vLLM V1's KVCacheManager
 * (vllm-project/vllm `vllm/v1/core/kv_cache_manager.py`
 * `get_computed_blocks`, `allocate_slots`, `free`).
 */

import type { BlockPool } from "./block-pool.ts";
import { blockHash, numTokens, type RequestState } from "./request-state.ts";

export interface KvCacheManager {
  readonly pool: BlockPool;
  /**
   * Longest cached prefix of `r`, in whole blocks, written to `out`. Never covers the last
   * token, which must be recomputed to produce logits: at most ⌊(L−1)/B⌋ blocks.
   */
  findCachedBlocks(r: RequestState, out: number[]): number;
  /**
   * Give `r` blocks for `n` more tokens after attaching `numHits` cached blocks from `hits`
   * (admission only). False, with nothing changed, when the free queue cannot cover them.
   * On success `r.numComputed` includes the hits, and full blocks are registered in the
   * prefix cache as soon as they are scheduled (hash published before the forward pass).
   * With `cacheNow` false (a load from the host tier) the new blocks are registered only by
   * the request's next allocation, once their KV has arrived.
   */
  allocateSlots(
    r: RequestState,
    n: number,
    hits: readonly number[],
    numHits: number,
    cacheNow?: boolean,
  ): boolean;
  /**
   * Blocks `allocateSlots(r, n, hits, numHits)` lacks: more than 0 when it would fail (what
   * SGLang's preemption for a waiting request must free).
   */
  shortfall(r: RequestState, n: number, hits: readonly number[], numHits: number): number;
  /** Blocks only `r` holds: what preempting it frees. */
  /**
   * Blocks only `r` holds, which freeing it gives back, less those in `skip` (a waiting
   * request's prefix hits: freed, they stay its hits, not its room).
   */
  numOwnBlocks(r: RequestState, skip?: ReadonlySet<number>): number;
  /** Release `r`'s blocks (hashes stay on the blocks, so the prefix remains hittable). */
  free(r: RequestState): void;
}

export interface KvCacheManagerOptions {
  pool: BlockPool;
  enablePrefixCaching: boolean;
}

export function createKvCacheManager(options: KvCacheManagerOptions): KvCacheManager {
  const { pool, enablePrefixCaching } = options;
  const blockSize = pool.blockSize;

  /** New blocks `r` needs for `n` more tokens after attaching `numHits` hits. */
  const blocksNeeded = (r: RequestState, n: number, numHits: number) =>
    Math.max(
      0,
      Math.ceil((r.numComputed + numHits * blockSize + n) / blockSize) - r.blocks.length - numHits,
    );
  // Cached hits sitting in the free queue stop being free once touched.
  const evictable = (hits: readonly number[], numHits: number) => {
    let n = 0;
    for (let i = 0; i < numHits; i++) if (pool.refCount(hits[i]) === 0) n++;
    return n;
  };

  return {
    pool,
    findCachedBlocks(r, out) {
      out.length = 0;
      if (!enablePrefixCaching) return 0;
      const maxBlocks = Math.floor((numTokens(r) - 1) / blockSize);
      for (let i = 0; i < maxBlocks; i++) {
        const b = pool.lookup(blockHash(r, i, blockSize));
        if (b < 0) break;
        out.push(b);
      }
      return out.length;
    },

    allocateSlots(r, n, hits, numHits, cacheNow = true) {
      const computed = r.numComputed + numHits * blockSize;
      const needed = blocksNeeded(r, n, numHits);
      if (needed + evictable(hits, numHits) > pool.numFree()) return false;

      if (numHits > 0) {
        pool.touch(hits, numHits);
        for (let i = 0; i < numHits; i++) r.blocks.push(hits[i]);
        r.numRegistered = r.blocks.length;
        r.numComputed = computed;
      }
      if (needed > 0) pool.allocate(needed, r.blocks);

      if (enablePrefixCaching && cacheNow) {
        const full = Math.floor((computed + n) / blockSize);
        for (let i = r.numRegistered; i < full; i++) {
          pool.register(r.blocks[i], blockHash(r, i, blockSize));
        }
        if (full > r.numRegistered) r.numRegistered = full;
      }
      return true;
    },

    shortfall: (r, n, hits, numHits) =>
      blocksNeeded(r, n, numHits) + evictable(hits, numHits) - pool.numFree(),

    numOwnBlocks(r, skip) {
      let n = 0;
      for (const b of r.blocks) if (pool.refCount(b) === 1 && skip?.has(b) !== true) n++;
      return n;
    },

    free(r) {
      pool.free(r.blocks);
      r.blocks.length = 0;
      r.numRegistered = 0;
    },
  };
}
