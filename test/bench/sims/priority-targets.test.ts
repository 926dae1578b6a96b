import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  judge,
  longestWait,
  meanLine,
  type Pair,
  PRIORITY_SPEC,
  priorityTargets,
} from "../../../src/bench/sims/priority-targets.ts";
import type { SimulateRunReport } from "../../../src/simulate/simulate-report.ts";
import { argsOf, testIo } from "./helpers.ts";

/** A small mix, priorities off then on, over 10 simulated seconds: real runs, in this process. */
const SMALL = [
  "--workload",
  "mix:chat@interactive=0.5,swe-bash@bulk=0.5",
  "--concurrency",
  "2",
  "--warmup",
  "0s",
  "--duration",
  "10s",
];

let shared: { pairs: Pair[]; out: string; noted: string[] } | undefined;
async function small() {
  if (shared === undefined) {
    const t = testIo(() => undefined);
    const pairs = await priorityTargets(argsOf(PRIORITY_SPEC, [...SMALL, "--seeds", "1"]), t.io);
    shared = { pairs, out: t.stdout(), noted: t.noted };
  }
  return shared;
}

/** `r` with the interactive class's TTFT p95 and the run's steps/min set. */
function withFigures(
  r: SimulateRunReport,
  ttftP95: number,
  stepsPerMin: number,
): SimulateRunReport {
  const interactive = r.classes.interactive;
  assert.ok(interactive !== undefined);
  return {
    ...r,
    steps_per_min: stepsPerMin,
    classes: {
      ...r.classes,
      interactive: { ...interactive, ttft_ms: { ...interactive.ttft_ms, p95: ttftP95 } },
    },
  };
}

describe("bench:priority", () => {
  it("runs each seed off then on, with a section per seed and the closing line", async () => {
    const { pairs, out, noted } = await small();
    assert.deepEqual(noted, [
      "# run 1/2: seed 1, priorities off\n",
      "# run 2/2: seed 1, priorities on\n",
    ]);
    assert.equal(pairs.length, 1);
    assert.equal(pairs[0].off.priority, undefined, "priorities off: no class counters");
    assert.ok(pairs[0].on.priority !== undefined);
    const lines = out.split("\n");
    assert.match(lines[0], /^seed 1 \([\d.]+ s wall\)$/);
    assert.match(lines[1], /^ {2}priorities off: [\d.]+ steps\/min \(interactive /);
    assert.match(lines[5], /^ {2}priorities on : /);
    assert.match(lines[8], /; preemption victims bulk \d+, promotions interactive /);
    assert.match(lines[9], /^ {2}target 1 interactive TTFT p95: /);
    assert.match(
      lines[12],
      /^mean over seeds 1: TTFT ratio [\d.-]+, steps\/min ratio [\d.]+; all targets (PASS|FAIL)$/,
    );
  });

  it("each target passes at its bound and fails past it", async () => {
    const { pairs } = await small();
    const { off, on } = pairs[0];
    const pair = (ttftOn: number, spmOn: number): Pair => ({
      seed: 1,
      wallS: 1,
      off: withFigures(off, 1000, 100),
      on: withFigures(on, ttftOn, spmOn),
    });
    const verdicts = (p: Pair) => judge(p).text.match(/(PASS|FAIL)$/gm);
    // Two programs on two engines never wait: the third target passes in every pair here.
    assert.deepEqual(verdicts(pair(250, 95)), ["PASS", "PASS", "PASS"]);
    assert.deepEqual(verdicts(pair(251, 94.9))?.slice(0, 2), ["FAIL", "FAIL"]);
    assert.ok(
      judge(pair(250, 95)).text.includes(
        "target 1 interactive TTFT p95: 250 / 1000 ms = 0.250 (≤ 0.25) PASS",
      ),
    );
    assert.equal(judge(pair(250, 95)).pass, true);
    assert.equal(judge(pair(251, 95)).pass, false);

    // A bulk request parked past its starvation threshold and one tick fails the third.
    const bulk = on.priority?.classes.bulk;
    assert.ok(bulk !== undefined);
    const bound = bulk.settings.starvation_ms + on.simulated.scheduler_interval_ms;
    const starved: SimulateRunReport = {
      ...on,
      priority: {
        ...(on.priority as NonNullable<SimulateRunReport["priority"]>),
        classes: {
          ...(on.priority as NonNullable<SimulateRunReport["priority"]>).classes,
          bulk: { ...bulk, still_waiting_max_ms: bound + 1 },
        },
      },
    };
    assert.equal(longestWait(starved, "bulk"), bound + 1);
    const verdict = judge({ seed: 1, wallS: 1, off, on: starved });
    assert.equal(verdict.pass, false);
    assert.match(verdict.text, /target 3 longest bulk wait: .* FAIL\n$/);
  });

  it("the closing line takes the mean of each seed's ratios", () => {
    const report = (ttft: number, spm: number) =>
      ({
        steps_per_min: spm,
        classes: { interactive: { ttft_ms: { p95: ttft } } },
      }) as unknown as SimulateRunReport;
    const pairs: Pair[] = [
      { seed: 1, wallS: 1, off: report(100, 100), on: report(10, 100) },
      { seed: 2, wallS: 1, off: report(100, 100), on: report(30, 90) },
    ];
    assert.equal(
      meanLine(pairs, false),
      "mean over seeds 1,2: TTFT ratio 0.200, steps/min ratio 0.950; all targets FAIL\n",
    );
  });
});
