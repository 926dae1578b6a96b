import type { ProgramPlan, Workload } from "./types.ts";

/**
 * Where a closed-loop driver takes its next program. Both drivers (`maitred bench`'s
 * closed-loop.ts and the simulator's program-loop.ts) run C slots; when a slot frees it asks
 * the feed for the slot's next program:
 *   1. a plain workload: the workload's next program in sequence, whatever the slot
 *      (`programAt(0)`, `programAt(1)`, …);
 *   2. a mix (mix-workload.ts): slot s always runs its component's programs, the component's
 *      next one each time, numbered by launch order across the mix.
 * So the same workload gives both drivers the same program ids, classes and conversations.
 */
export interface ProgramFeed {
  /** The next program for slot `slot` (0 ≤ slot < concurrency). */
  next(slot: number): ProgramPlan;
  /** Programs handed out so far. */
  readonly launched: number;
}

export function createProgramFeed(workload: Workload, concurrency: number): ProgramFeed {
  let launched = 0;
  const mix = workload.mix;
  if (mix === undefined) {
    return {
      next: () => workload.programAt(launched++), // 1
      get launched() {
        return launched;
      },
    };
  }
  const slots = mix.slots(concurrency);
  const taken = mix.components.map(() => 0);
  return {
    next(slot) {
      const c = slots[slot];
      if (c === undefined) throw new RangeError(`slot ${slot} out of 0..${concurrency - 1}`);
      return mix.programOf(c, taken[c]++, launched++); // 2
    },
    get launched() {
      return launched;
    },
  };
}
