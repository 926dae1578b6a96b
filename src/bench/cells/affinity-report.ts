/**
 * The middle of `npm run bench:cells`'s report, as lines: program affinity per phase and the
 * programs that moved at the kill and the restart, then how long the killed cell's programs
 * took to be answered elsewhere.
 */
import { CHECK_INTERVAL_MS } from "../../cells/haproxy-config.ts";
import { median } from "../percentile.ts";
import { renderTable } from "../table-cells.ts";
import type { CellsRun } from "./cells-run.ts";
import type { CellsFigures } from "./figures.ts";
import { f0, f2, maxOf } from "./format.ts";
import { VICTIM_NAME } from "./stack-shape.ts";

export function affinityLines(run: CellsRun, f: CellsFigures): string[] {
  const { downAt, upAt } = f.windows;
  const aff = f.affinity;
  const windowOf = {
    stable: "whole phase",
    dead: `from ${VICTIM_NAME} DOWN (kill + ${f0(downAt - run.killAt)} ms)`,
    back: `from ${VICTIM_NAME} UP (restart + ${f0(upAt - run.restartAt)} ms)`,
  };
  const fromVictim = f.atKill.moved.filter((m) => f.ringOf(m.program) === VICTIM_NAME).length;
  const backHome = f.atBack.moved.filter((m) => m.to === VICTIM_NAME).length;
  return [
    "",
    "program affinity (HAProxy's log: requests answered in full that started and ended inside the window)",
    renderTable(
      ["phase", "window", "programs", "mean share on its most-used cell", "programs < 100 %"],
      (["stable", "dead", "back"] as const).map((p) => [
        p,
        windowOf[p],
        String(aff[p].programs),
        `${f2(100 * aff[p].meanShare)} %`,
        String(aff[p].below),
      ]),
    ),
    `moved at the kill: ${f.atKill.moved.length} of the ${f.atKill.both} programs answered before the kill and after DOWN ` +
      `(${fromVictim} of ${VICTIM_NAME}'s, ${f.atKill.moved.length - fromVictim} of other cells'); ` +
      `moved at the restart: ${f.atBack.moved.length} of ${f.atBack.both} answered before the restart and after UP ` +
      `(${backHome} back to ${VICTIM_NAME}, ${f.atBack.moved.length - backHome} elsewhere)`,
  ];
}

export function failoverLines(run: CellsRun, f: CellsFigures): string[] {
  const o = f.failover;
  const row = (label: string, xs: number[]) => [
    label,
    String(xs.length),
    f0(median(xs)),
    f0(maxOf(xs)),
  ];
  return [
    "",
    `${VICTIM_NAME}'s programs at the kill (the hash's, sent there before it): ${o.victims}; ${o.fate.elsewhere} then answered on another cell (sent before the restart), ` +
      `${o.fate.lost} lost their request in flight (a failed request ends its program), ${o.fate.quiet} sent nothing more before the restart, ${o.fate.other} other`,
    renderTable(
      ["until that program's first step on another cell", "programs", "p50 ms", "max ms"],
      [
        row("kill → HAProxy sent it to another cell", o.toSent),
        row("kill → answered there", o.toAnswer),
        row("its first request after the kill (or the kill) → answered there", o.fromAttempt),
        row("  of which the new cell's router held it (x-maitred-paused-ms)", o.heldThere),
      ],
    ),
    `compare: one health-check interval ${CHECK_INTERVAL_MS} ms + one step (median in stable ${f0(o.stepMs)} ms) = ${f0(o.bound)} ms; ` +
      `HAProxy logged ${VICTIM_NAME} DOWN ${f0(f.windows.downAt - run.killAt)} ms after the kill. The step on the new cell starts cold: no KV cache of the program there.`,
  ];
}
