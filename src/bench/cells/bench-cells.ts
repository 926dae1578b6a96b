/**
 * `npm run bench:cells` from its settings to its report: the HAProxy pass (run-cells.ts) and its
 * report, printed before the lone-router pass starts (lone-pass.ts), then that pass's report and
 * the goals. Returns whether every goal measured was met.
 */

import { affinityLines, failoverLines } from "./affinity-report.ts";
import type { Closers } from "./closers.ts";
import { cellsFigures } from "./figures.ts";
import { cellsGoals, goalLines, goalsMet } from "./goals.ts";
import { latencyLines } from "./latency-report.ts";
import { loneSkipped, runLonePass } from "./lone-pass.ts";
import { loneLines, loneStepsPerMin } from "./lone-report.ts";
import type { ProgressLog } from "./progress-log.ts";
import { runCells } from "./run-cells.ts";
import { cpuLines, headerLines, phaseLines } from "./run-report.ts";
import type { CellsSettings } from "./spec.ts";

export interface BenchCellsIo {
  closers: Closers;
  log: ProgressLog;
  /** One line (or table) of the report, on stdout. */
  print: (line: string) => void;
}

export async function runBenchCells(s: CellsSettings, io: BenchCellsIo): Promise<boolean> {
  const { closers, log } = io;
  const printAll = (lines: readonly string[]) => {
    for (const l of lines) io.print(l);
  };
  const pass = await runCells(s, closers, log);
  const { run } = pass;
  const f = cellsFigures(run);
  printAll([
    ...headerLines(run, f),
    ...phaseLines(run, f),
    ...cpuLines(run, f),
    ...affinityLines(run, f),
    ...failoverLines(run, f),
    ...latencyLines(run),
    "",
  ]);
  let lonePerMin: number | null = null;
  const skipped = loneSkipped(s, pass.workload);
  if (skipped !== null) io.print(skipped);
  else {
    const lone = await runLonePass(pass, f, closers, log);
    lonePerMin = loneStepsPerMin(lone);
    printAll(loneLines(run, f, lone));
  }
  const goals = cellsGoals(run, f, lonePerMin);
  printAll(goalLines(goals));
  return goalsMet(goals);
}
