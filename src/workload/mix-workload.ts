import type { PriorityClass } from "../core/priority/priority-classes.ts";
import { ConfigError } from "../errors.ts";
import { drawClass, formatShares, pickWeighted } from "./class-mix.ts";
import { createRng, deriveSeed } from "./prng.ts";
import type { MixComponent, ProgramPlan, Workload, WorkloadMix, WorkloadSpec } from "./types.ts";

/**
 * Mixed workloads: `--workload mix:chat@interactive=0.2,deepseek@bulk=0.8` runs chat sessions
 * and DeepSeek agent programs side by side, each component with its own priority class.
 *
 * The weights are shares of the closed loop's concurrency slots, not of launched programs: at
 * C = 128 the mix above keeps 26 chat users and 102 agents busy the whole run (a chat session
 * lasts about a minute, an agent program many; drawing each launched program from the weights
 * would leave the short sessions a few percent of what runs). Slot counts are the largest
 * remainders of `weight × C`, interleaved (smooth weighted round robin), so the staggered ramp-up
 * mixes the components too. Each slot starts its component's programs in that component's
 * order; the mix's index of a program (its id `p<index>`, text seed and start offset) is its
 * launch position. A driver without slots (`programAt(i)`) draws program i's component from
 * the weights with its own seeded stream.
 *
 * A program's class: its component's `@class`, else a draw from `--class-mix`, else none.
 */

/** Seed stream of the per-index component draw (workload.ts uses 1–3, class-mix.ts 5). */
const STREAM_MIX = 4;
export const MIX_PREFIX = "mix:";

export interface MixOptions {
  seed: number;
  staggerMs: number;
  classMix?: WorkloadSpec["classMix"];
}

/** Slots per component: largest remainders of weight × concurrency (ties: earlier component). */
export function slotCounts(weights: readonly number[], concurrency: number): number[] {
  const total = weights.reduce((a, w) => a + w, 0);
  const quotas = weights.map((w) => (w / total) * concurrency);
  const counts = quotas.map((q) => Math.floor(q));
  let left = concurrency - counts.reduce((a, n) => a + n, 0);
  const order = quotas
    .map((q, i) => ({ i, frac: q - Math.floor(q) }))
    .sort((a, b) => b.frac - a.frac || a.i - b.i);
  for (const { i } of order) {
    if (left <= 0) break;
    counts[i]++;
    left--;
  }
  return counts;
}

/** Interleave `counts` (smooth weighted round robin): slot s goes to the most owed component. */
export function interleaveSlots(counts: readonly number[]): number[] {
  const n = counts.reduce((a, c) => a + c, 0);
  const given = counts.map(() => 0);
  const out: number[] = [];
  for (let s = 0; s < n; s++) {
    let best = -1;
    let owed = Number.NEGATIVE_INFINITY;
    for (let c = 0; c < counts.length; c++) {
      if (given[c] >= counts[c]) continue;
      const o = (counts[c] * (s + 1)) / n - given[c];
      if (o > owed) {
        owed = o;
        best = c;
      }
    }
    given[best]++;
    out.push(best);
  }
  return out;
}

function componentLabel(c: { name: string; priorityClass?: PriorityClass }): string {
  return c.priorityClass === undefined ? c.name : `${c.name}@${c.priorityClass}`;
}

/** The mix's display name, as the flag would write it. */
export function mixName(components: readonly Omit<MixComponent, "workload">[]): string {
  return (
    MIX_PREFIX +
    formatShares(components.map((c) => ({ name: componentLabel(c), weight: c.weight })))
  );
}

/** Build a mix from its resolved components (built by the caller: load-workload.ts). */
export function createMixWorkload(components: readonly MixComponent[], o: MixOptions): Workload {
  if (components.length === 0) throw new ConfigError("workload", "a mix needs a component");
  const weights = components.map((c) => c.weight);
  const classOf = (c: MixComponent, index: number): PriorityClass | undefined =>
    c.priorityClass ??
    (o.classMix && o.classMix.length > 0 ? drawClass(o.classMix, o.seed, index) : undefined);
  const mix: WorkloadMix = {
    components,
    slots: (concurrency) => interleaveSlots(slotCounts(weights, concurrency)),
    programOf(c, n, index): ProgramPlan {
      const comp = components[c];
      const base = comp.workload.programAt(n);
      const plan: ProgramPlan = {
        ...base,
        programId: `p${index}`,
        index,
        source: `${comp.name}:${base.source}`,
        startOffsetMs: index * o.staggerMs,
        systemPrompt: { tokens: comp.workload.sharedPrefixTokens, tag: c + 1 },
      };
      const cls = classOf(comp, index);
      if (cls === undefined) delete plan.priorityClass;
      else plan.priorityClass = cls;
      return plan;
    },
  };
  const subagentsAtOnce = Math.max(0, ...components.map((c) => c.workload.subagentsAtOnce ?? 0));
  return {
    name: mixName(components),
    seed: o.seed,
    sharedPrefixTokens: components[0].workload.sharedPrefixTokens,
    size: Number.POSITIVE_INFINITY,
    ...(subagentsAtOnce > 0 ? { subagentsAtOnce } : {}),
    programAt(index) {
      if (!Number.isInteger(index) || index < 0) throw new RangeError(`bad program index ${index}`);
      const u = createRng(deriveSeed(o.seed, STREAM_MIX, index)).next();
      return mix.programOf(pickWeighted(weights, u), index, index);
    },
    mix,
  };
}
