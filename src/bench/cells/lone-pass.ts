/**
 * The lone-router pass of `npm run bench:cells`: the same stack without HAProxy, fresh, each
 * router driven directly with the programs the hash gave its cell, in the same order (same ids,
 * traces, text seeds and streaming), as many at a time as that cell had in flight on average
 * while stable; warmup, then one phase measured. Its steps/min against the HAProxy pass's is
 * the ratio the bench reports.
 */
import { wallClock } from "../../runtime/clock.ts";
import type { Workload } from "../../workload/types.ts";
import { abortableSleep, startClosedLoop } from "../closed-loop.ts";
import type { RunRecords } from "../records.ts";
import { createStepClient } from "../step-client.ts";
import { programIndex, subsequence, traceClient } from "../trace-client.ts";
import { apportion, cpuShares, meanInFlight, type Span, sum } from "./cells-analysis.ts";
import type { Closers } from "./closers.ts";
import { cpuOf, takeSample } from "./cpu-sample.ts";
import type { CellsFigures } from "./figures.ts";
import { sec } from "./format.ts";
import type { ProgressLog } from "./progress-log.ts";
import type { CellsPass } from "./run-cells.ts";
import type { CellsSettings } from "./spec.ts";
import { type Proc, startCellBackends } from "./stack.ts";
import { CELLS, PROGRAM_PREFIX } from "./stack-shape.ts";

export interface LoneRun {
  /** Each cell's mean programs in flight while stable, and the lone routers' concurrency. */
  shares: number[];
  concurrency: number[];
  /** When the pass started, and the measured window (after its warmup). */
  t0: number;
  window: Span;
  /** Each lone router's run. */
  records: RunRecords[];
  cpu: ReturnType<typeof cpuShares>;
  /** Requests that failed (those cut when the window closed are not failures). */
  failed: number;
}

/** Why the lone pass is left out, or null when it runs. */
export function loneSkipped(s: Pick<CellsSettings, "skipLone">, workload: Workload) {
  if (s.skipLone) return "lone-router pass skipped (--skip-lone)";
  if (workload.mix !== undefined) {
    return "lone-router pass skipped: a mixed workload gives its programs to slots, not by index";
  }
  return null;
}

export async function runLonePass(
  pass: CellsPass,
  f: CellsFigures,
  closers: Closers,
  log: ProgressLog,
): Promise<LoneRun> {
  const { run, stack, workload } = pass;
  const s = run.settings;
  const shares = meanInFlight(
    CELLS,
    run.records.programs,
    run.endAt,
    run.t0,
    f.ringOf,
    f.windows.calm.stable,
  );
  const concurrency = apportion(shares, s.concurrency);
  log(`lone pass: ${sec(s.warmupMs)} warmup + ${sec(s.phaseMs)}`);
  const { backends, urls } = await startCellBackends(stack);
  const routers: Proc[] = [];
  for (let c = 0; c < CELLS.length; c++) routers.push(await stack.startCell(CELLS[c], urls[c], 0));
  const t0 = wallClock.now();
  const lone = CELLS.map((cell, c) => {
    const indices = run.ids.filter((i) => f.ringOf(i) === cell).map(programIndex);
    const t = traceClient(
      createStepClient({ url: routers[c].url, connections: concurrency[c] }),
      0,
      pass.streams,
    );
    const loop = startClosedLoop({
      workload: subsequence(workload, indices, cell),
      client: t.client,
      model: pass.model,
      concurrency: concurrency[c],
      timeScale: s.timeScale,
      warmupMs: s.warmupMs,
      durationMs: s.phaseMs,
      maxRetries: 0,
      streamShare: 1,
      programIdPrefix: PROGRAM_PREFIX,
    });
    return { t, loop };
  });
  const never = new AbortController().signal;
  const sleepUntil = (at: number) => abortableSleep(wallClock, at - wallClock.now(), never);
  const sample = () =>
    takeSample(
      backends.map((b) => b.pid),
      sum(routers.map((r) => cpuOf(r.pid))),
      null,
    );
  await sleepUntil(t0 + s.warmupMs);
  const c0 = sample();
  await sleepUntil(t0 + s.warmupMs + s.phaseMs);
  const cpu = cpuShares(c0, sample(), s.phaseMs, run.cpuCount);
  const records = await Promise.all(lone.map((l) => l.loop.done));
  await Promise.all(lone.map((l) => l.t.client.close()));
  await closers.closeAll();
  const failed = sum(lone.map((l) => l.t.attempts.filter((x) => x.outcome === "failed").length));
  const window = { from: t0 + s.warmupMs, to: t0 + s.warmupMs + s.phaseMs };
  return { shares, concurrency, t0, window, records, cpu, failed };
}
