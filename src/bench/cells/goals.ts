/**
 * `npm run bench:cells`'s goals, each with its measured value and whether it was met (null:
 * not measured): affinity, losses, failover time, the ratio against lone routers, and the
 * latency HAProxy adds.
 */
import { median } from "../percentile.ts";
import { renderTable } from "../table-cells.ts";
import type { CellsRun } from "./cells-run.ts";
import type { CellsFigures } from "./figures.ts";
import { f0, f2, f3, maxOf } from "./format.ts";
import { addedP50 } from "./latency-report.ts";
import { VICTIM_NAME } from "./stack-shape.ts";

/** The ratio of steps/min through HAProxy to lone routers' that counts as no loss. */
const MIN_RATIO = 0.95;
/** The p50 HAProxy may add to a small request, ms. */
const MAX_ADDED_MS = 0.3;

export interface Goal {
  name: string;
  measured: string;
  met: boolean | null;
}

/** `loneStepsPerMin`: the lone routers' steps/min summed; null when the pass was left out. */
export function cellsGoals(run: CellsRun, f: CellsFigures, loneStepsPerMin: number | null): Goal[] {
  const aff = f.affinity;
  const below = aff.stable.below + aff.dead.below + aff.back.below;
  const k = f.kill;
  const { fromAttempt, bound } = f.failover;
  const ratio = loneStepsPerMin === null ? null : f.stableStepsPerMin / loneStepsPerMin;
  const { small, large } = run.latency;
  return [
    {
      name: "affinity 100 % (stable; dead, back after HAProxy saw the change)",
      measured: `${f2(100 * aff.stable.meanShare)} / ${f2(100 * aff.dead.meanShare)} / ${f2(100 * aff.back.meanShare)} %, ${below} programs below 100 %`,
      met: below === 0,
    },
    {
      name: `lost only requests in flight on ${VICTIM_NAME} at the kill; none hung`,
      measured: `${k.failed.length} lost (${k.lostAtKill.length} in flight on ${VICTIM_NAME} at the kill, ${k.lostElse.length} other), ${k.hung} hung`,
      met: k.lostElse.length === 0 && k.hung === 0,
    },
    {
      name: "to another cell ≤ one check interval + one step (p50, first request after kill → answered)",
      measured: `p50 ${f0(median(fromAttempt))} ms, max ${f0(maxOf(fromAttempt))} ms, bound ${f0(bound)} ms`,
      met: fromAttempt.length === 0 ? null : median(fromAttempt) <= bound,
    },
    {
      name: `steps/min through HAProxy (stable) ÷ three lone routers ≥ ${MIN_RATIO}`,
      measured: ratio === null ? "not measured" : f3(ratio),
      met: ratio === null ? null : ratio >= MIN_RATIO,
    },
    {
      name: `p50 latency HAProxy adds ≤ ${MAX_ADDED_MS} ms (small body)`,
      measured: `${f3(addedP50(small))} ms (~200 KB body: ${f3(addedP50(large))} ms)`,
      met: small.direct.length === 0 ? null : addedP50(small) <= MAX_ADDED_MS,
    },
  ];
}

export function goalLines(goals: readonly Goal[]): string[] {
  return [
    "",
    "goals",
    renderTable(
      ["goal", "measured", "met"],
      goals.map((g) => [g.name, g.measured, g.met === null ? "n/a" : g.met ? "met" : "not met"]),
    ),
  ];
}

/** A goal missed fails the run; one not measured does not. */
export const goalsMet = (goals: readonly Goal[]) => goals.every((g) => g.met !== false);
