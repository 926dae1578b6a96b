/**
 * The simulator runs what the HTTP router runs. The same scripted programs (the chat preset,
 * one seed) go once through `maitred serve`'s router in front of simulated backends over
 * loopback HTTP, with the workload driver, on one virtual clock, and once through `simulate`;
 * the core's decisions (pauses, resumes, seats, lending, releases) come out in the same
 * sequence. Only the run's end differs: the driver releases the programs still running when
 * its window closes, the simulator just stops.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveCompareFlags } from "../../src/bench/bench-options.ts";
import { runCompare } from "../../src/bench/compare.ts";
import { inProcessStarters } from "../../src/bench/start-router-for.ts";
import { createVirtualClock } from "../../src/runtime/clock.ts";
import { runSimulation } from "../../src/simulate/run-simulation.ts";
import { resolveSimulateFlags } from "../../src/simulate/simulate-options.ts";
import { simRunOptions } from "../../src/simulate/simulate-sweep.ts";
import type { Logger } from "../../src/util/logger.ts";
import { loadWorkload } from "../../src/workload/load-workload.ts";

/** Small enough (one backend of 300 blocks) that eight chat programs pause and resume often. */
const RUN = {
  workload: "chat",
  concurrency: "8",
  numBackends: "1",
  numGpuBlocks: "300",
  warmup: "0s",
  duration: "2m",
  seed: "1",
};
const DECISION = /paused|resumed|seated|lent|released|marked/;
/** Decisions this close to the window's end may differ: there the two runs stop differently. */
const END_MARGIN = 5;

type Fields = Record<string, unknown> | undefined;

function decision(msg: string, fields: Fields): string | null {
  if (!DECISION.test(msg)) return null;
  // The driver names its programs after the router under test (`tr-p3`).
  return `${msg} ${String(fields?.programId ?? "").replace(/^tr-/, "")}`;
}

async function overHttp(): Promise<{ steps: number; decisions: string[] }> {
  const decisions: string[] = [];
  const record = (msg: string, fields?: Fields) => {
    const d = decision(msg, fields);
    if (d !== null) decisions.push(d);
  };
  const logger: Logger = {
    debug: record,
    info: record,
    warn: record,
    error: record,
    child: () => logger,
  };
  const clock = createVirtualClock();
  try {
    const o = resolveCompareFlags({ ...RUN, timeScale: "1", modes: "tr", progress: false });
    const [run] = await runCompare({ ...o, clock, ...inProcessStarters(clock, logger) });
    return { steps: run.steps_completed, decisions };
  } finally {
    clock.stop();
  }
}

async function inSimulate(): Promise<{ steps: number; decisions: string[] }> {
  const decisions: string[] = [];
  const o = resolveSimulateFlags({ ...RUN, router: "tr" });
  const { report } = runSimulation({
    ...simRunOptions(o, "tr", o.concurrency[0], await loadWorkload(o.workload)),
    onLog: (_level, msg, fields) => {
      const d = decision(msg, fields);
      if (d !== null) decisions.push(d);
    },
  });
  return { steps: report.steps_completed, decisions };
}

test("the HTTP router and the simulator make the same decisions for the same programs", async () => {
  const sim = await inSimulate();
  const http = await overHttp();
  assert.equal(http.steps, sim.steps, "the same steps completed");
  // The driver's releases of the programs still running when its window closed.
  const during = http.decisions.slice();
  while (during.at(-1)?.startsWith("program released")) during.pop();
  const n = Math.min(during.length, sim.decisions.length) - END_MARGIN;
  assert.ok(n >= 100, `a run with pressure: ${n} decisions to compare`);
  assert.ok(sim.decisions.some((d) => d.startsWith("program paused")));
  for (let i = 0; i < n; i++) {
    assert.equal(
      during[i],
      sim.decisions[i],
      `decision ${i} differs; before it: ${during.slice(Math.max(0, i - 3), i).join(" | ")}`,
    );
  }
});
