/**
 * What the simulated model "says": a seeded natural output length (where it would sample EOS)
 * and the generated token ids. Both are pure functions of the request's fingerprint (engine
 * seed + prompt tokens), so the same prompt yields the same answer on every run and every
 * engine, as greedy decoding would.
 */

import { combine32, unitInterval } from "./hash.ts";
import { drawWordPieceId } from "./tokenizer.ts";

/**
 * Mean natural output length when the config sets none. A modelling choice: chat and agent
 * turns mostly answer in a few hundred tokens; benchmarks that need exact lengths send
 * `ignore_eos` with `max_tokens`.
 */
export const DEFAULT_MEAN_OUTPUT_TOKENS = 256;

/** Exponentially distributed length ≥ 1 with the given mean. */
export function naturalOutputLength(fingerprint: number, meanTokens: number): number {
  return Math.max(1, Math.ceil(-meanTokens * Math.log(unitInterval(fingerprint ^ 0x5f3759df))));
}

/**
 * The fingerprint of sample `index` of a request with `n` samples. Sample 0 keeps the
 * request's own, so choice 0 of an `n` = 3 request is the answer the request alone gets.
 */
export function sampleFingerprint(fingerprint: number, index: number): number {
  return index === 0 ? fingerprint : combine32(fingerprint ^ 0x6a09e667, index);
}

/** The `index`-th generated token of a request; a word piece, so it decodes to text. */
export function generatedTokenId(fingerprint: number, index: number): number {
  return drawWordPieceId(combine32(fingerprint, index));
}
