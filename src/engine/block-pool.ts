/**
 * vLLM V1's KV block pool (vllm-project/vllm
 * `vllm/v1/core/block_pool.py`, `kv_cache_utils.py` FreeKVCacheBlockQueue):
 *
 * - block 0 is the null block, never handed out, hence `num_gpu_blocks − 1` in `usage`;
 * - free blocks form a doubly linked queue with O(1) removal; allocation pops the head, freeing
 *   appends to the tail, so the queue is an LRU of evictable cached blocks;
 * - a full block may carry a chained hash registered in the hash → block map; a block whose
 *   requests all finished keeps its hash while it sits in the free queue and is evicted from
 *   the map only when allocation pops it for new content;
 * - reference counts: touching a cached free block takes it out of the free queue.
 *
 * Blocks are small integers and all per-block state lives in typed arrays: no per-block objects.
 */

import { createHashIndex } from "./hash-index.ts";
import { createSlotList } from "./slot-list.ts";

export interface BlockPoolOptions {
  numGpuBlocks: number;
  blockSize: number;
}

export interface BlockPool {
  readonly numGpuBlocks: number;
  readonly blockSize: number;
  numFree(): number;
  /** 1 − free / (numGpuBlocks − 1) (`vllm:kv_cache_usage_perc`). */
  usage(): number;
  refCount(block: number): number;
  /** The block holding `hash`, or −1. */
  lookup(hash: number): number;
  /** Hash carried by `block`, or −1. */
  hashOf(block: number): number;
  /** Take a reference on cached blocks (prefix hits); free ones leave the free queue. */
  touch(blocks: readonly number[], count: number): void;
  /** Pop `count` blocks from the free-queue head into `out`, evicting their hashes. */
  allocate(count: number, out: number[]): void;
  /** Drop one reference each, last block first, so a sequence's tail is evicted before its prefix. */
  free(blocks: readonly number[]): void;
  /** Register a full block's hash unless another block already holds it; true if registered. */
  register(block: number, hash: number): boolean;
  /** Number of hashes in the map (blocks resident in the prefix cache). */
  numCached(): number;
  /** Blocks with a reference, counted by scanning (invariant checks, not hot paths). */
  numReferenced(): number;
  /** Drop every hash; refused (false) while any block is referenced, as vLLM does. */
  resetPrefixCache(): boolean;
  /** Free blocks in queue order, head first (tests and debugging). */
  freeQueue(): number[];
}

const NO_HASH = -1;
const NULL_BLOCK = 0;

export function createBlockPool(options: BlockPoolOptions): BlockPool {
  const { numGpuBlocks, blockSize } = options;
  const queue = createSlotList(numGpuBlocks);
  const refs = new Int32Array(numGpuBlocks);
  const hashes = new Float64Array(numGpuBlocks).fill(NO_HASH);
  const byHash = createHashIndex(numGpuBlocks);
  let free = 0;

  const pushTail = (b: number) => {
    queue.pushTail(b);
    free++;
  };
  const unlink = (b: number) => {
    queue.unlink(b);
    free--;
  };

  for (let b = NULL_BLOCK + 1; b < numGpuBlocks; b++) pushTail(b);

  return {
    numGpuBlocks,
    blockSize,
    numFree: () => free,
    usage: () => 1 - free / (numGpuBlocks - 1),
    refCount: (b) => refs[b],
    lookup: (hash) => byHash.get(hash),
    hashOf: (b) => hashes[b],
    touch(blocks, count) {
      for (let i = 0; i < count; i++) {
        const b = blocks[i];
        if (refs[b] === 0) unlink(b);
        refs[b]++;
      }
    },
    allocate(count, out) {
      if (count > free) throw new RangeError(`allocate ${count} blocks with ${free} free`);
      for (let i = 0; i < count; i++) {
        const b = queue.head();
        unlink(b);
        const h = hashes[b];
        if (h !== NO_HASH) {
          byHash.delete(h);
          hashes[b] = NO_HASH;
        }
        refs[b] = 1;
        out.push(b);
      }
    },
    free(blocks) {
      for (let i = blocks.length - 1; i >= 0; i--) {
        const b = blocks[i];
        if (--refs[b] === 0) pushTail(b);
      }
    },
    register(b, hash) {
      if (!byHash.add(hash, b)) return false;
      hashes[b] = hash;
      return true;
    },
    numCached: () => byHash.size,
    numReferenced() {
      let n = 0;
      for (let b = NULL_BLOCK + 1; b < numGpuBlocks; b++) if (refs[b] > 0) n++;
      return n;
    },
    resetPrefixCache() {
      if (free !== numGpuBlocks - 1) return false;
      byHash.clear();
      hashes.fill(NO_HASH);
      return true;
    },
    freeQueue() {
      const out: number[] = [];
      for (let b = queue.head(); b !== queue.END; b = queue.next(b)) out.push(b);
      return out;
    },
  };
}
