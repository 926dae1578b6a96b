/**
 * The host-memory KV tier, after vLLM's native CPU offloading (`--kv-offloading-backend native
 * --kv-offloading-size <GiB>`, the OffloadingConnector):
 *
 * - **Size.** `GiB · 2³⁰ / (bytes per token · block size)` host blocks, each one GPU block's KV
 *   for all layers and ranks (Llama-3.1-8B in BF16: 128 KiB per token, 2 MiB per block).
 * - **Store** (GPU → host) is write-through: every block that a step fills is copied once, at
 *   the step's end, whether or not the GPU ever evicts it. Blocks a request got as hits are not
 *   stored again. vLLM submits stores at the start of the next step and they do not hold up
 *   compute; at 50 GB/s a whole 8,192-token chunk (1 GiB) copies in about a tenth of the step
 *   that computed it, so the model takes a block as stored when its step ends.
 * - **Load** (host → GPU). A request admitted from nothing computed looks up its GPU prefix hit,
 *   then the run of whole blocks after it that the host holds. With a host hit, GPU blocks for
 *   the hit are allocated at once (the load competes for GPU room like any admission), the host
 *   blocks are pinned, and the request waits in the waiting queue, not blocking the requests
 *   behind it, until the copy ends; the first step that starts after that schedules its rest
 *   (at least its last token, which must be computed to sample). Loads go one after another on
 *   the link (first come, first served), beside compute, not in it.
 * - **Touch.** A lookup refreshes every key of the request the host holds, deepest first, so a
 *   live context's root stays and a stale tail goes first. vLLM touches at every lookup; a
 *   request that waits at the head of the queue is looked up at every step, and touching its
 *   whole context each time was most of a simulation's time (profiled), so here it is touched
 *   at its first lookup and when it is admitted, which moves it to the same place in the LRU
 *   order unless the pool evicts thousands of blocks while it waits.
 *
 * A preempted request comes back through the same lookup, so it reloads from the host what a
 * GPU hit no longer covers.
 */

import { createHistogram, KV_OFFLOAD_SIZE_BUCKETS } from "./histogram.ts";
import { createHostPool, type HostPool } from "./host-pool.ts";
import { blockHash, type RequestState } from "./request-state.ts";
import type { HostTierStats } from "./types.ts";

const GIB = 2 ** 30;

export interface HostTierOptions {
  sizeGiB: number;
  blockSize: number;
  kvBytesPerToken: number;
  linkBytesPerSecond: number;
}

export interface HostTier {
  readonly pool: HostPool;
  /** Whole blocks after the GPU hit (`from`) that the host holds for `r`, up to `to`. */
  match(r: RequestState, from: number, to: number): number;
  /** Refresh `r`'s held keys below `to`, deepest first. */
  touch(r: RequestState, to: number): void;
  /** Start loading blocks [from, from + n) of `r` at `now`; `r.loadDoneAt` says when it ends. */
  startLoad(r: RequestState, from: number, n: number, now: number): void;
  /** End the loads that are done by `now`: their host blocks are free to evict again. */
  endLoads(now: number): void;
  /** `r` left while loading (aborted): its load is forgotten. */
  drop(r: RequestState): void;
  /** When the next load in flight ends; NaN when none is. */
  nextLoadDoneAt(): number;
  readonly numLoading: number;
  /**
   * Count an admission from nothing computed as vLLM's external prefix cache does: the tokens
   * beyond the GPU hit were queried, `hit` of them came from the host.
   */
  recordLookup(queried: number, hit: number): void;
  /** Copy to the host every block of `r` its last step filled. */
  storeComputed(r: RequestState): void;
  stats(): HostTierStats;
}

export function createHostTier(o: HostTierOptions): HostTier {
  const { blockSize, linkBytesPerSecond } = o;
  const bytesPerBlock = o.kvBytesPerToken * blockSize;
  const pool = createHostPool(Math.floor((o.sizeGiB * GIB) / bytesPerBlock));
  const toDeviceSizes = createHistogram(KV_OFFLOAD_SIZE_BUCKETS);
  const toHostSizes = createHistogram(KV_OFFLOAD_SIZE_BUCKETS);
  const t = { toDeviceBytes: 0, toDeviceSeconds: 0, toHostBytes: 0, toHostSeconds: 0 };
  let externalQueries = 0;
  let externalHits = 0;
  /** When the host → GPU link finishes the loads already queued on it. */
  let linkFreeAt = 0;
  /** Loads in flight, in the order they end (the link copies one after another). */
  const inFlight: RequestState[] = [];

  const endLoad = (r: RequestState) => {
    if (r.loadKeys !== null) pool.unpin(r.loadKeys);
    r.loadKeys = null;
    r.loadDoneAt = Number.NaN;
  };

  return {
    pool,
    match(r, from, to) {
      // A request waiting at the head is looked up every step. While the pool evicts nothing,
      // the keys it held stay held, so the run found last time can only have grown at its end.
      const hashAt = (i: number) => blockHash(r, i, blockSize);
      const memo = r.hostRun;
      let n = 0;
      if (memo !== null && memo.from === from && memo.evicted === pool.evicted) {
        n = memo.length + pool.count(hashAt, from + memo.length, to);
      } else n = pool.count(hashAt, from, to);
      if (memo === null) r.hostRun = { from, length: n, evicted: pool.evicted };
      else {
        memo.from = from;
        memo.length = n;
        memo.evicted = pool.evicted;
      }
      return n;
    },
    touch: (r, to) => pool.touch((i) => blockHash(r, i, blockSize), 0, to),
    startLoad(r, from, n, now) {
      const keys: number[] = [];
      for (let i = from; i < from + n; i++) keys.push(blockHash(r, i, blockSize));
      pool.pin(keys);
      r.loadKeys = keys;
      const bytes = n * bytesPerBlock;
      const seconds = bytes / linkBytesPerSecond;
      const start = Math.max(now, linkFreeAt);
      linkFreeAt = start + seconds;
      r.loadDoneAt = linkFreeAt;
      t.toDeviceBytes += bytes;
      t.toDeviceSeconds += seconds;
      toDeviceSizes.observe(bytes);
      inFlight.push(r);
    },
    endLoads(now) {
      let done = 0;
      while (done < inFlight.length && inFlight[done].loadDoneAt <= now) endLoad(inFlight[done++]);
      if (done > 0) inFlight.splice(0, done);
    },
    drop(r) {
      const i = inFlight.indexOf(r);
      if (i < 0) return;
      inFlight.splice(i, 1);
      endLoad(r);
    },
    nextLoadDoneAt: () => (inFlight.length > 0 ? inFlight[0].loadDoneAt : Number.NaN),
    get numLoading() {
      return inFlight.length;
    },
    storeComputed(r) {
      const full = Math.floor(r.numComputed / blockSize);
      if (full <= r.numStored) return;
      for (let i = r.numStored; i < full; i++) pool.store(blockHash(r, i, blockSize));
      const bytes = (full - r.numStored) * bytesPerBlock;
      r.numStored = full;
      t.toHostBytes += bytes;
      t.toHostSeconds += bytes / linkBytesPerSecond;
      toHostSizes.observe(bytes);
    },
    stats() {
      return {
        sizeGiB: o.sizeGiB,
        numBlocks: pool.capacity,
        usedBlocks: pool.size,
        numLoading: inFlight.length,
        externalQueries,
        externalHits,
        evictedBlocks: pool.evicted,
        skippedStores: pool.skipped,
        toDevice: {
          bytes: t.toDeviceBytes,
          seconds: t.toDeviceSeconds,
          sizes: toDeviceSizes.snapshot(),
        },
        toHost: { bytes: t.toHostBytes, seconds: t.toHostSeconds, sizes: toHostSizes.snapshot() },
      };
    },
    recordLookup(queried, hit) {
      externalQueries += queried;
      externalHits += hit;
    },
  };
}
