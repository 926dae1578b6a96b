import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RunRecords, StepRecord } from "../../../src/bench/records.ts";
import {
  ratioLine,
  SIMULATE_SPEC,
  simulateTargets,
  waitsOf,
} from "../../../src/bench/sims/simulate-targets.ts";
import {
  type Measured,
  trVariants,
  variantRow,
} from "../../../src/bench/sims/simulate-variants.ts";
import type { SimRunOptions, SimRunResult } from "../../../src/simulate/run-simulation.ts";
import type { SimulateRunReport } from "../../../src/simulate/simulate-report.ts";
import { smallRun, smallWorkload } from "../../simulate/helpers.ts";
import { argsOf, testIo } from "./helpers.ts";

const args = (...argv: string[]) => argsOf(SIMULATE_SPEC, argv);
const MIN = 60_000;

const step = (endMs: number, pausedMs: number): StepRecord => ({
  programId: "p",
  stepIndex: 0,
  startMs: 0,
  endMs,
  promptTokens: 1,
  cachedTokens: null,
  completionTokens: 1,
  pausedMs,
});

describe("bench:simulate's figures", () => {
  it("waits count the paused steps that ended in the window, over 10 and 20 minutes", () => {
    const records = {
      steps: [
        step(5 * MIN, 30 * MIN), // in the warm-up
        step(15 * MIN, 0), // never paused
        step(20 * MIN, 11 * MIN),
        step(30 * MIN, 21 * MIN),
        step(40 * MIN, 1000),
        step(60 * MIN, 25 * MIN), // after the window
      ],
    } as RunRecords;
    assert.deepEqual(waitsOf(records, { warmupMs: 10 * MIN, durationMs: 50 * MIN }), {
      pausedSteps: 3,
      over10Min: 2,
      over20Min: 1,
    });
  });

  it("a target is met at its value and not below", () => {
    assert.equal(
      ratioLine("tr / oracle at C=128", 0.8, 0.8),
      "tr / oracle at C=128         0.800  (target >= 0.8: met)",
    );
    assert.match(ratioLine("x", 0.7999, 0.8), /NOT met\)$/);
  });

  it("the variants the flags ask for, in order: the sweep, headroom, ageing, buffers, no credit", () => {
    const sweep = trVariants({
      sweep: true,
      headroomSteps: [],
      ageingS: [],
      buffers: [],
      noCredit: false,
    });
    assert.equal(sweep.length, 12);
    assert.equal(sweep[0].label, "best-fit, decay off, interval 1 s");
    assert.equal(sweep[11].o?.schedulerIntervalMs, 5000);
    const lists = trVariants({
      sweep: false,
      headroomSteps: [0],
      ageingS: [300],
      buffers: [500],
      noCredit: true,
    });
    assert.deepEqual(
      lists.map((v) => v.label),
      ["headroom steps 0", "ageing 300 s", "flat buffer 500", "no shared credit"],
    );
    assert.deepEqual(lists[1].knobs, { ageingMs: 300_000 });
    assert.deepEqual(lists[2].knobs, { growthHeadroomSteps: 0, bufferPerProgram: 500 });
    const shaped = lists[3].shapeSample?.({ kvUsage: 0.2 } as never);
    assert.equal((shaped as { kvUsage: number }).kvUsage, 1, "a full cache: no shared credit");
    assert.ok(lists.every((v) => v.router === "tr" && v.concurrency === 128));
  });

  it("a variant's row is the mean over its seeds, against the targets' default and oracle", () => {
    const run = (steps: number, over10Min: number): Measured => ({
      label: "v",
      seed: 1,
      wallS: 1,
      waits: { pausedSteps: 10, over10Min, over20Min: 0 },
      report: {
        steps_per_min: steps,
        prompt_tokens: { cache_hit_rate: 0.5 },
        backends: [{ preemptions: 2 }, { preemptions: 3 }],
        scheduler: { pauses: 4, forcedResumes: 1 },
        step_latency_ms: { p99: 30_000, max: 90_000 },
      } as unknown as SimulateRunReport,
    });
    assert.deepEqual(variantRow("v", [run(100, 1), run(300, 3)], { default: 100, oracle: 400 }), [
      "v",
      "200.0",
      "2.00",
      "0.500",
      "50.0",
      "5",
      "4",
      "1.0",
      "30",
      "90",
      "20.0",
    ]);
  });
});

describe("bench:simulate's runs", () => {
  it("per seed the five target runs, the targets, then the variants and their table", async () => {
    // One real small run's result stands for every run, its steps/min set per router and
    // concurrency: the targets' runs are 128 programs of the DeepSeek trace, too slow here.
    const real = smallRun({ concurrency: 2, warmupMs: 0, durationMs: 5_000 });
    const spm: Record<string, number> = {
      "default@128": 100,
      "tr@128": 160,
      "oracle@128": 180,
      "default@16": 50,
      "tr@16": 49,
    };
    const calls: SimRunOptions[] = [];
    const simulate = (o: SimRunOptions): SimRunResult => {
      calls.push(o);
      const steps = spm[`${o.router}@${o.concurrency}`];
      return { ...real, report: { ...real.report, steps_per_min: steps } };
    };
    const loaded: (number | undefined)[] = [];
    const t = testIo(() => undefined);
    const measured = await simulateTargets(
      args("--seeds", "1,2", "--warmup", "1m", "--duration", "2m", "--ageing", "0"),
      t.io,
      {
        simulate,
        load: async (spec) => {
          loaded.push(spec.seed);
          return smallWorkload(spec.seed);
        },
      },
    );
    assert.deepEqual(loaded, [1, 2], "a workload per seed, loaded once");
    assert.deepEqual(
      measured.map((m) => `${m.label} ${m.seed}`),
      [
        ...[1, 2].flatMap((s) =>
          ["default C=128", "tr C=128", "oracle C=128", "default C=16", "tr C=16"].map(
            (l) => `${l} ${s}`,
          ),
        ),
        "ageing 0 s 1",
        "ageing 0 s 2",
      ],
    );
    assert.deepEqual(
      calls.map((c) => c.engineSeed),
      [1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 1, 2],
    );
    assert.ok(calls.every((c) => c.warmupMs === 60_000 && c.durationMs === 120_000));
    assert.equal(calls[10].knobs.ageingMs, 0, "the variant's knob on top of the target's");
    assert.equal(calls[0].knobs.ageingMs, real.report.simulated.scheduler_config.ageingMs);
    const lines = t.stdout().split("\n");
    assert.equal(
      lines[0],
      "# targets: deepseek trace, 2 x llama-3.1-8b-h100, 3 simulated min (window 2 min), seeds 1,2",
    );
    assert.match(lines[1], /^default C=128 {22}seed 1 {3}100\.0 steps\/min {2}hit /);
    assert.equal(lines[11], "");
    assert.equal(lines[12], "tr / default at C=128        1.600  (target >= 1.5: met)");
    assert.equal(lines[13], "tr / oracle at C=128         0.889  (target >= 0.8: met)");
    assert.equal(lines[14], "tr / default at C=16         0.980  (target >= 0.98: met)");
    assert.match(lines[15], /^wall per simulated hour, tr C=128: [\d.]+ s \(target <= 60 s\)$/);
    assert.match(lines[16], /^starvation, tr C=128: forced resumes /);
    assert.equal(lines[18], "# tr variants at C=128");
    assert.match(lines[22], /^\| tr at C=128 \(mean of seeds 1,2\) \| steps\/min \|/);
    assert.match(lines[24], /^\| ageing 0 s \| 160\.0 \| 1\.60 \| 0\.889 \| /);
  });
});
