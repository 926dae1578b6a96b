import { PRIORITY_CLASSES, parsePriorityClass } from "../core/priority/priority-classes.ts";
import { ConfigError } from "../errors.ts";
import { createRng, deriveSeed } from "./prng.ts";
import type { ClassShare } from "./types.ts";

/**
 * Priority classes per program: `--class-mix interactive=0.2,bulk=0.8` gives each program a
 * class drawn from the weights with its own seeded stream (seed, program index), so a program's
 * class does not depend on which programs were drawn before it, and the live bench and the
 * simulator give program i the same class.
 */

/** Seed stream of the class draw (workload.ts uses 1–3, mix-workload.ts 4). */
const STREAM_CLASS = 5;

export interface Weighted<T> {
  item: T;
  weight: number;
}

/**
 * `name=weight,name=weight`: every weight a finite number > 0 (normalised, need not sum to 1),
 * every name once. `item` turns a name into its value or throws a ConfigError.
 */
export function parseWeights<T>(
  text: string,
  field: string,
  item: (name: string) => T,
): Weighted<T>[] {
  const parts = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (parts.length === 0) throw new ConfigError(field, "must list at least one name=weight");
  const seen = new Set<string>();
  return parts.map((part) => {
    const eq = part.lastIndexOf("=");
    if (eq <= 0) throw new ConfigError(field, `"${part}" is not name=weight`);
    const name = part.slice(0, eq).trim();
    const weight = Number(part.slice(eq + 1).trim());
    if (!Number.isFinite(weight) || weight <= 0) {
      throw new ConfigError(field, `weight of "${name}" must be a number > 0, got "${part}"`);
    }
    if (seen.has(name)) throw new ConfigError(field, `lists "${name}" twice`);
    seen.add(name);
    return { item: item(name), weight };
  });
}

/** `--class-mix` text → shares; a name that is not a class is a ConfigError naming the flag. */
export function parseClassMix(text: string, field = "class-mix"): ClassShare[] {
  return parseWeights(text, field, (name) => {
    const cls = parsePriorityClass(name);
    if (cls === null) {
      throw new ConfigError(
        field,
        `unknown priority class "${name}"; classes: ${PRIORITY_CLASSES.join(", ")}`,
      );
    }
    return cls;
  }).map(({ item, weight }) => ({ priorityClass: item, weight }));
}

/** Index into `weights` chosen by `u` in [0, 1) (cumulative normalised weights). */
export function pickWeighted(weights: readonly number[], u: number): number {
  const total = weights.reduce((a, w) => a + w, 0);
  let left = u * total;
  for (let i = 0; i < weights.length; i++) {
    left -= weights[i];
    if (left < 0) return i;
  }
  return weights.length - 1;
}

/** Program `index`'s class under `shares` with workload seed `seed`. */
export function drawClass(
  shares: readonly ClassShare[],
  seed: number,
  index: number,
): ClassShare["priorityClass"] {
  const u = createRng(deriveSeed(seed, STREAM_CLASS, index)).next();
  return shares[
    pickWeighted(
      shares.map((s) => s.weight),
      u,
    )
  ].priorityClass;
}

/** `interactive=0.2,bulk=0.8`: the shares as a flag would write them (names, reports). */
export function formatShares(shares: readonly { name: string; weight: number }[]): string {
  return shares.map((s) => `${s.name}=${s.weight}`).join(",");
}
