/**
 * The lone-router part of `npm run bench:cells`'s report, as lines: how the lone routers were
 * driven, each cell's steps/min and median step lone and through HAProxy, their CPU, and the
 * ratio of steps/min through HAProxy (stable) to the three lone routers'.
 */
import { median } from "../percentile.ts";
import { renderTable } from "../table-cells.ts";
import { sum } from "./cells-analysis.ts";
import type { CellsRun } from "./cells-run.ts";
import type { CellsFigures } from "./figures.ts";
import { f0, f1, f3, sec } from "./format.ts";
import type { LoneRun } from "./lone-pass.ts";
import { CELLS } from "./stack-shape.ts";
import { stepsIn } from "./windows.ts";

/** Each lone router's steps/min over the measured window. */
export const lonePerRouter = (lone: LoneRun) =>
  lone.records.map(
    (r) => (stepsIn(r, lone.t0, lone.window).length * 60_000) / (lone.window.to - lone.window.from),
  );

/** The three lone routers' steps/min, summed. */
export const loneStepsPerMin = (lone: LoneRun) => sum(lonePerRouter(lone));

export function loneLines(run: CellsRun, f: CellsFigures, lone: LoneRun): string[] {
  const s = run.settings;
  const perLone = lonePerRouter(lone);
  const total = sum(perLone);
  const hapStable = stepsIn(run.records, run.t0, f.windows.calm.stable);
  const stepMs = (xs: readonly { startMs: number; endMs: number }[]) =>
    f0(median(xs.map((x) => x.endMs - x.startMs)));
  const c = lone.cpu;
  return [
    `three lone routers (no HAProxy), fresh, each with 2 fresh backends and driven directly with the programs the hash gives its cell, in the same order ` +
      `(same ids, traces, text seeds and streaming), as many at a time as the cell had in flight on average while stable ` +
      `(${CELLS.map((cell, i) => `${cell} ${f1(lone.shares[i])}`).join(", ")} → ${lone.concurrency.join(" + ")} = ${s.concurrency}); ${sec(s.warmupMs)} warmup, then ${sec(s.phaseMs)} measured`,
    renderTable(
      [
        "cell",
        "programs at a time",
        "lone steps/min",
        "via HAProxy, stable",
        "lone median step ms",
        "via HAProxy median step ms",
        "HAProxy's stable programs run lone too",
      ],
      CELLS.map((cell, i) => {
        const mine = hapStable.filter((x) => f.ringOf(x.programId) === cell);
        const loneSteps = stepsIn(lone.records[i], lone.t0, lone.window);
        const loneRan = new Set(loneSteps.map((x) => x.programId));
        const hapRan = new Set(mine.map((x) => x.programId));
        return [
          cell,
          String(lone.concurrency[i]),
          f1(perLone[i]),
          f1((mine.length * 60_000) / s.phaseMs),
          stepMs(loneSteps),
          stepMs(mine),
          `${[...hapRan].filter((p) => loneRan.has(p)).length} of ${hapRan.size}`,
        ];
      }),
    ),
    `while measured, CPU (% of one CPU): 6 backends ${f1(c.backends)}, 3 routers ${f1(c.cells)}, driver ${f1(c.driver)}, other ${f1(c.other)}; machine busy ${f0(c.machine)} %`,
    `three lone routers: ${f1(total)} steps/min summed (${lone.failed} failed requests); ` +
      `through HAProxy while stable: ${f1(f.stableStepsPerMin)} steps/min; ratio ${f3(f.stableStepsPerMin / total)}`,
  ];
}
