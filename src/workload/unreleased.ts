import { createRng, deriveSeed } from "./prng.ts";
import type { ProgramPlan, Workload } from "./types.ts";

/**
 * "What if some clients never release their programs?": a share of the programs, drawn per
 * program by seed, end without `program_release` (as a client that forgets `program_final`),
 * so the router keeps them until its idle timeout. Drivers read `ProgramPlan.unreleased`.
 * This wraps both ways a driver draws programs (`programAt`, and `mix.programOf` for a mix)
 * and draws by the program's launch index, so both drivers mark the same programs.
 */

/** Seed stream of the draw (workload.ts uses 1–3 and 7, mix-workload.ts 4, class-mix.ts 5). */
const STREAM_UNRELEASED = 6;

/** Whether program `index` is never released, under `share` (0–1) and workload seed `seed`. */
export function drawUnreleased(share: number, seed: number, index: number): boolean {
  if (share <= 0) return false;
  if (share >= 1) return true;
  return createRng(deriveSeed(seed, STREAM_UNRELEASED, index)).next() < share;
}

/**
 * Whether a driver releases a program that ended: always, unless its client is one that never
 * does and the program completed (a failed or stopped program is given up, so released).
 */
export function releasesAtEnd(plan: ProgramPlan, completed: boolean): boolean {
  return !(completed && plan.unreleased === true);
}

export function markUnreleased(workload: Workload, share: number): Workload {
  if (share <= 0) return workload;
  const mark = (p: ProgramPlan): ProgramPlan =>
    drawUnreleased(share, workload.seed, p.index) ? { ...p, unreleased: true } : p;
  const out: Workload = {
    ...workload,
    unreleased: share,
    programAt: (i) => mark(workload.programAt(i)),
  };
  const mix = workload.mix;
  if (mix !== undefined) {
    out.mix = { ...mix, programOf: (c, n, index) => mark(mix.programOf(c, n, index)) };
  }
  return out;
}
