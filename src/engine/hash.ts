/**
 * Seeded, allocation-free integer hashing for the engine: chained block hashes (as vLLM's
 * prefix cache: block_hash[i] = H(block_hash[i−1], tokens of block i)) and deterministic draws
 * (output lengths, generated tokens). Any collision-resistant chained hash serves when exact
 * vLLM hash compatibility is not needed; ours is 53 bits so hashes are exact doubles and
 * cheap Map keys (collision odds ≈ n²/2⁵⁴, under 10⁻⁴ for a million distinct blocks).
 */

const TWO_32 = 4_294_967_296;
/** 2⁵³ / 2³²: the low lane keeps 21 bits. */
const LOW_LANE = 2_097_152;

/** Parent hash of a sequence's first block (vLLM's NONE_HASH). */
export const NONE_HASH = 0;

/** murmur3's 32-bit finaliser. */
export function mix32(x: number): number {
  let h = x ^ (x >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export function combine32(a: number, b: number): number {
  return mix32(Math.imul(a ^ 0x9e3779b9, 0x01000193) ^ b);
}

/** A uniform draw in (0, 1) from a 32-bit key. */
export function unitInterval(key: number): number {
  return (mix32(key) + 0.5) / TWO_32;
}

/** Chained 53-bit hash of tokens[start, end) under `parent`. */
export function hashTokenRange(
  parent: number,
  tokens: readonly number[],
  start: number,
  end: number,
): number {
  let h1 = (parent >>> 0) ^ 0x243f6a88;
  let h2 = Math.floor(parent / TWO_32) ^ 0x85a308d3;
  for (let i = start; i < end; i++) {
    const t = tokens[i];
    h1 = Math.imul(h1 ^ t, 0x5bd1e995);
    h1 ^= h1 >>> 15;
    h2 = Math.imul(h2 + t, 0x27d4eb2f);
    h2 ^= h2 >>> 13;
  }
  const a = mix32(h1 ^ (end - start));
  const b = mix32(h2 ^ a);
  return a * LOW_LANE + (b >>> 11);
}

/** A 32-bit fingerprint of a whole token list (seeds per-prompt draws). */
export function fingerprint(seed: number, tokens: readonly number[]): number {
  let h = mix32(seed ^ tokens.length);
  for (let i = 0; i < tokens.length; i++) h = Math.imul(h ^ tokens[i], 0x01000193);
  return mix32(h);
}
