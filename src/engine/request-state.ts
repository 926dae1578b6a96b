/**
 * The engine's record of one request. Tokens are the prompt (never copied) followed by the
 * generated ids; block hashes are computed once per full block and kept across preemption,
 * because the token content of a block never changes (hashes kept on resume).
 */

import { hashTokenRange, NONE_HASH } from "./hash.ts";
import { naturalOutputLength } from "./output-sampler.ts";
import type { EngineRequest } from "./types.ts";

export interface RequestState {
  readonly id: string;
  readonly prompt: readonly number[];
  readonly output: number[];
  readonly maxTokens: number;
  readonly minTokens: number;
  /** Output length at which this request samples EOS (Infinity with ignore_eos). */
  readonly stopLength: number;
  /** Seeds the generated token ids. */
  readonly fingerprint: number;
  /** Output fixed in advance (EngineRequest.forcedOutput); null = sampled. */
  readonly forced: readonly number[] | null;
  readonly arrivalTime: number;
  /**
   * Priority scheduling's order (queue-order.ts): the priority as one number, lower served
   * first; when it last entered the waiting queue; and the order the engine took it in. Unused
   * first come, first served.
   */
  rank: number;
  queuedAt: number;
  seq: number;
  /** Tokens whose KV is in this request's blocks (prefix hits included). */
  numComputed: number;
  /** Highest `numComputed` ever reached; recomputing below it is preemption cost. */
  highWater: number;
  readonly blocks: number[];
  /** Chained hashes of full blocks, index = block position in the sequence. */
  readonly hashes: number[];
  /** Leading blocks of `blocks` already offered to the prefix cache. */
  numRegistered: number;
  /** Prefix-cache hit tokens at first admission (GPU hits and host loads); −1 before it. */
  numCachedTokens: number;
  /** Of those, tokens loaded from the host tier. */
  numLoadedTokens: number;
  /** Leading full blocks already copied to the host tier (or got as hits, never copied). */
  numStored: number;
  /** When the host → GPU load this request waits for ends; NaN when it waits for none. */
  loadDoneAt: number;
  /** The host tier refreshed this request's keys since it last waited with nothing computed. */
  hostTouched: boolean;
  /** The host-held run of blocks found by the last lookup, and the pool's evictions then. */
  hostRun: { from: number; length: number; evicted: number } | null;
  /** Host keys the load reads (pinned until it ends); null when not loading. */
  loadKeys: number[] | null;
  numPreemptions: number;
  firstScheduledTime: number;
  firstTokenTime: number;
  lastTokenTime: number;
  finished: boolean;
}

export function createRequestState(
  request: EngineRequest,
  fingerprint: number,
  meanOutputTokens: number,
): RequestState {
  const forced = request.forcedOutput ?? null;
  const natural = request.ignoreEos
    ? Number.POSITIVE_INFINITY
    : naturalOutputLength(fingerprint, meanOutputTokens);
  const stopLength = forced !== null ? forced.length : Math.max(natural, request.minTokens);
  return {
    id: request.id,
    prompt: request.promptTokens,
    output: [],
    maxTokens: request.maxTokens,
    minTokens: request.minTokens,
    stopLength,
    fingerprint,
    forced,
    arrivalTime: request.arrivalTime,
    rank: 0,
    queuedAt: request.arrivalTime,
    seq: 0,
    numComputed: 0,
    highWater: 0,
    blocks: [],
    hashes: [],
    numRegistered: 0,
    numCachedTokens: -1,
    numLoadedTokens: 0,
    numStored: 0,
    loadDoneAt: Number.NaN,
    loadKeys: null,
    hostTouched: false,
    hostRun: null,
    numPreemptions: 0,
    firstScheduledTime: Number.NaN,
    firstTokenTime: Number.NaN,
    lastTokenTime: Number.NaN,
    finished: false,
  };
}

export function numTokens(r: RequestState): number {
  return r.prompt.length + r.output.length;
}

/** Hash of full block `index`, computing (once) any missing hashes before it. */
export function blockHash(r: RequestState, index: number, blockSize: number): number {
  const hashes = r.hashes;
  while (hashes.length <= index) {
    const i = hashes.length;
    const parent = i === 0 ? NONE_HASH : hashes[i - 1];
    const start = i * blockSize;
    const end = start + blockSize;
    const p = r.prompt.length;
    if (end <= p) {
      hashes.push(hashTokenRange(parent, r.prompt, start, end));
    } else {
      // A block straddling prompt and output (rare: once per block boundary): copy it.
      const tokens: number[] = [];
      for (let t = start; t < end; t++) tokens.push(t < p ? r.prompt[t] : r.output[t - p]);
      hashes.push(hashTokenRange(parent, tokens, 0, blockSize));
    }
  }
  return hashes[index];
}
