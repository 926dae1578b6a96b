import type { Rng } from "./prng.ts";

/**
 * The distributions of the parametric agent model: lognormals and
 * weighted mixtures of lognormals, as plain data so presets can be printed and overridden.
 */

export interface LogNormal {
  /** Mean of ln X. */
  mu: number;
  /** Standard deviation of ln X. */
  sigma: number;
}

export interface MixturePart extends LogNormal {
  weight: number;
}

/** A lognormal is a mixture of one part; weights need not sum to 1 (they are normalised). */
export type Distribution = LogNormal | { parts: readonly MixturePart[] };

export function lognormal(mu: number, sigma: number): LogNormal {
  return { mu, sigma };
}

/** A lognormal given by its median (the tool tables write LN(ln 3000, 0.3)). */
export function lognormalMedian(median: number, sigma: number): LogNormal {
  return { mu: Math.log(median), sigma };
}

export function mixture(...parts: MixturePart[]): Distribution {
  return { parts };
}

export function sample(dist: Distribution, rng: Rng): number {
  if (!("parts" in dist)) return rng.lognormal(dist.mu, dist.sigma);
  const total = dist.parts.reduce((s, p) => s + p.weight, 0);
  let u = rng.next() * total;
  for (const part of dist.parts) {
    u -= part.weight;
    if (u < 0) return rng.lognormal(part.mu, part.sigma);
  }
  const last = dist.parts[dist.parts.length - 1];
  return rng.lognormal(last.mu, last.sigma);
}

/** Sample, round to an integer and clip to [min, max]. */
export function sampleInt(dist: Distribution, rng: Rng, min: number, max: number): number {
  return Math.min(max, Math.max(min, Math.round(sample(dist, rng))));
}
