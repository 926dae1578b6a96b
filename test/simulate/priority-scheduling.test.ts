import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { buildEngines, type SimRunOptions } from "../../src/simulate/run-simulation.ts";
import { resolveSimulateFlags } from "../../src/simulate/simulate-options.ts";
import { formatSimulateTable } from "../../src/simulate/simulate-report.ts";
import { smallRun, smallWorkload } from "./helpers.ts";

const SHORT: Partial<SimRunOptions> = {
  router: "default",
  concurrency: 4,
  warmupMs: 0,
  durationMs: 20_000,
};

describe("maitred simulate --scheduling-policy", () => {
  it("is fcfs by default, whatever the personality; priority takes the personality's rules", () => {
    assert.equal(resolveSimulateFlags({}).priorityScheduling, undefined);
    assert.equal(resolveSimulateFlags({ personality: "sglang" }).priorityScheduling, undefined);
    assert.deepEqual(resolveSimulateFlags({ schedulingPolicy: "priority" }).priorityScheduling, {
      rules: "vllm",
    });
    const sglang = resolveSimulateFlags({
      schedulingPolicy: "priority",
      personality: "sglang",
      scheduleLowPriorityValuesFirst: true,
      prioritySchedulingPreemptionThreshold: "4",
    });
    assert.deepEqual(sglang.priorityScheduling, {
      rules: "sglang",
      lowValuesFirst: true,
      preemptionThreshold: 4,
    });
    assert.throws(() => resolveSimulateFlags({ personality: "tgi" }), /--personality/);
  });

  it("starts every engine of the run with it", () => {
    const p = { rules: "sglang", lowValuesFirst: false, preemptionThreshold: 10 } as const;
    const engines = buildEngines({
      ...SHORT,
      workload: smallWorkload(),
      numBackends: 3,
      profile: "llama-3.1-8b-h100",
      engineSeed: 1,
      priorityScheduling: p,
    } as SimRunOptions);
    assert.deepEqual(
      engines.map((e) => e.config.priorityScheduling),
      [p, p, p],
    );
  });

  it("is recorded with the engine settings of the report and its setup line, fcfs not at all", () => {
    const fcfs = smallRun(SHORT).report;
    assert.equal("priority_scheduling" in fcfs.simulated, false);
    assert.doesNotMatch(formatSimulateTable([fcfs]), /by priority/);
    const run = smallRun({
      ...SHORT,
      priorityScheduling: { rules: "sglang", lowValuesFirst: true, preemptionThreshold: 3 },
    }).report;
    assert.deepEqual(run.simulated.priority_scheduling, {
      scheduling_policy: "priority",
      personality: "sglang",
      schedule_low_priority_values_first: true,
      priority_scheduling_preemption_threshold: 3,
    });
    assert.match(
      formatSimulateTable([run]),
      /engines scheduling by priority \(SGLang's rules: low values first, preempting for a gap over 3\)/,
    );
    const vllm = smallRun({ ...SHORT, priorityScheduling: { rules: "vllm" } }).report;
    assert.deepEqual(vllm.simulated.priority_scheduling, {
      scheduling_policy: "priority",
      personality: "vllm",
    });
  });
});
