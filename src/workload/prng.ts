/**
 * A small seeded PRNG for workloads: mulberry32 for uniforms, Box–Muller for normals. The
 * workload must be a pure function of (seed, description) so that the live driver and the
 * virtual-time simulator replay the same programs, hence no `Math.random()`.
 */

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Standard normal. */
  normal(): number;
  /** exp(Normal(mu, sigma)): the workload model writes every distribution this way. */
  lognormal(mu: number, sigma: number): number;
  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number;
}

const TWO_POW_32 = 4294967296;

/** mulberry32 (Tommy Ettinger): 32-bit state, full period, good enough for sampling. */
export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  let spare: number | null = null;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / TWO_POW_32;
  };
  const normal = (): number => {
    if (spare !== null) {
      const s = spare;
      spare = null;
      return s;
    }
    // 1 - next() is in (0, 1], so the log is finite.
    const r = Math.sqrt(-2 * Math.log(1 - next()));
    const theta = 2 * Math.PI * next();
    spare = r * Math.sin(theta);
    return r * Math.cos(theta);
  };
  return {
    next,
    normal,
    lognormal: (mu, sigma) => Math.exp(mu + sigma * normal()),
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
  };
}

/**
 * Mix a seed with further integers into an independent seed (a murmur3-style finaliser per
 * part), so program 7 of seed 1 never shares a stream with program 1 of seed 7.
 */
export function deriveSeed(seed: number, ...parts: number[]): number {
  let h = fmix(seed ^ 0x9e3779b9);
  for (const part of parts) h = fmix(Math.imul(h, 0x01000193) ^ (part >>> 0));
  return h;
}

/** murmur3's 32-bit finaliser: every input bit affects every output bit. */
function fmix(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Fisher–Yates permutation of 0..n-1. */
export function permutation(n: number, rng: Rng): number[] {
  const out = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    const tmp = out[i];
    out[i] = out[j];
    out[j] = tmp;
  }
  return out;
}
