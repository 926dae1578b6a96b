import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ProgramRecord, RunRecords } from "../../src/bench/records.ts";
import type { Scheduler } from "../../src/core/api.ts";
import { createEngine } from "../../src/engine/engine.ts";
import { engineConfigFromProfile } from "../../src/engine/timing.ts";
import { createEventKernel } from "../../src/engine/virtual-driver.ts";
import { Errors, type MaitredError } from "../../src/errors.ts";
import type { RunLoop } from "../../src/runtime/run-loop.ts";
import { startProgramLoop } from "../../src/simulate/program-loop.ts";
import {
  createSimRuntime,
  type RequestResult,
  type SimRequest,
  type SimRuntime,
} from "../../src/simulate/sim-runtime.ts";
import { resolveTrKnobs } from "../../src/simulate/simulate-options.ts";
import { subagentCount } from "../../src/workload/subagents.ts";
import type { ProgramPlan, Workload } from "../../src/workload/types.ts";
import { createWorkload } from "../../src/workload/workload.ts";
import { TREE_WORKLOAD } from "../workload/tree-workload.ts";
import { smallRun } from "./helpers.ts";

const tree = TREE_WORKLOAD;

interface Sent {
  id: string;
  programId: string;
  parentProgramId?: string;
  at: number;
}

/** A runtime whose answers take 1 s; `decide` returns an error to reject a request with. */
function fakeRuntime(decide: (r: SimRequest) => MaitredError | null = () => null) {
  const kernel = createEventKernel();
  const sent: Sent[] = [];
  const released: { id: string; at: number }[] = [];
  const runtime: SimRuntime = {
    kernel,
    scheduler: {} as Scheduler,
    loop: {} as RunLoop,
    backends: [],
    nowMs: () => kernel.now * 1000,
    submit(r) {
      sent.push({
        id: r.id,
        programId: r.programId,
        at: kernel.now,
        ...(r.parentProgramId === undefined ? {} : { parentProgramId: r.parentProgramId }),
      });
      const error = decide(r);
      kernel.after(error ? 0 : 1, () =>
        r.onDone(
          error
            ? { ok: false, error }
            : {
                ok: true,
                promptTokens: r.tokens.length,
                cachedTokens: 0,
                completionTokens: r.maxTokens,
                outputIds: Array(r.maxTokens).fill(20),
                pausedMs: 0,
              },
        ),
      );
    },
    release: (id) => released.push({ id, at: kernel.now }),
    tick: () => ({}),
    deadlineTick: () => {},
    liveRequests: 0,
    waitingByClass: () => ({}),
  };
  return { kernel, runtime, sent, released };
}

const newRecords = (): RunRecords => ({ steps: [], errors: [], programs: [], endMs: 0 });

describe("sub-agents in the simulator's closed loop", () => {
  it("launch at the parent's step end with its id, run side by side, and the parent resumes after the last", () => {
    const { kernel, runtime, sent, released } = fakeRuntime();
    const records = newRecords();
    startProgramLoop({ runtime, workload: tree, concurrency: 1, records, maxPrograms: 1 });
    kernel.run(60);
    assert.deepEqual(
      sent.map((s) => [s.id, s.at, s.parentProgramId]),
      [
        ["p0/0", 0, undefined],
        // Both at the instant the parent's answer arrived, naming it, while it waits.
        ["p0.c0/0", 1, "p0"],
        ["p0.c1/0", 1, "p0"],
        ["p0.c0/1", 4, "p0"],
        ["p0.c1/1", 4, "p0"],
        // The last sub-agent ended at 5 s; then the parent's 0.5 s.
        ["p0/1", 5.5, undefined],
      ],
    );
    assert.deepEqual(released, [
      { id: "p0.c0", at: 5 },
      { id: "p0.c1", at: 5 },
      { id: "p0", at: 6.5 },
    ]);
    // Sub-agents take no slot: one program in the loop, their steps in the records.
    assert.deepEqual(
      records.programs.map((p) => [p.programId, p.outcome]),
      [["p0", "completed"]],
    );
    assert.deepEqual(
      records.subagents?.map((p: ProgramRecord) => [
        p.programId,
        p.parentProgramId,
        p.launchMs,
        p.endMs,
        p.outcome,
      ]),
      [
        ["p0.c0", "p0", 1000, 5000, "completed"],
        ["p0.c1", "p0", 1000, 5000, "completed"],
      ],
    );
    assert.equal(records.steps.length, 6, "children's calls count as steps");
    assert.deepEqual(
      records.steps.filter((s) => s.programId === "p0.c1").map((s) => [s.stepIndex, s.endMs]),
      [
        [0, 2000],
        [1, 5000],
      ],
    );
  });

  it("hold the slot: the next program starts only when the parent has ended", () => {
    const { kernel, runtime, sent } = fakeRuntime();
    startProgramLoop({ runtime, workload: tree, concurrency: 1, records: newRecords() });
    kernel.run(8);
    assert.deepEqual(
      sent.filter((s) => s.programId === "p1").map((s) => [s.id, s.at]),
      [["p1/0", 6.5]],
    );
  });

  it("with the link off, the same requests go without a parent", () => {
    const { kernel, runtime, sent } = fakeRuntime();
    const workload: Workload = { ...tree, subagentLink: false };
    startProgramLoop({ runtime, workload, concurrency: 2, records: newRecords(), maxPrograms: 2 });
    kernel.run(60);
    assert.equal(sent.length, 12);
    assert.ok(sent.every((s) => s.parentProgramId === undefined));
    assert.deepEqual(
      sent.filter((s) => s.programId === "p1.c1").map((s) => s.at),
      [1, 4],
    );
  });

  it("a failed sub-agent is released and counted, and its parent goes on when the other ends", () => {
    const bad = Errors.badRequest("no", "parent_program_id");
    const { kernel, runtime, sent, released } = fakeRuntime((r) =>
      r.programId === "p0.c1" ? bad : null,
    );
    const records = newRecords();
    startProgramLoop({ runtime, workload: tree, concurrency: 1, records, maxPrograms: 1 });
    kernel.run(60);
    assert.deepEqual(
      records.subagents?.map((p) => [p.programId, p.outcome, p.endMs]),
      [
        ["p0.c0", "completed", 5000],
        ["p0.c1", "failed", 1000],
      ],
    );
    assert.deepEqual(
      records.errors.map((e) => [e.programId, e.kind]),
      [["p0.c1", "http_400_BadRequestError"]],
    );
    assert.deepEqual(
      released.map((r) => r.id),
      ["p0.c1", "p0.c0", "p0"],
    );
    assert.equal(sent.find((s) => s.id === "p0/1")?.at, 5.5);
    assert.equal(records.programs[0].outcome, "completed");
  });
});

describe("sub-agents in the simulator runtime", () => {
  it("request_arrived carries the parent: the core books the child under it", () => {
    const kernel = createEventKernel();
    const engine = createEngine(
      engineConfigFromProfile("llama-3.1-8b-h100", { maxModelLen: 4096 }),
    );
    const { knobs } = resolveTrKnobs({});
    const runtime = createSimRuntime({
      kernel,
      engines: [engine],
      config: { ...knobs, mode: "tr" },
    });
    runtime.tick();
    const results: RequestResult[] = [];
    const submit = (id: string, programId: string, parentProgramId?: string) =>
      runtime.submit({
        id,
        programId,
        ...(parentProgramId === undefined ? {} : { parentProgramId }),
        tokens: Array.from({ length: 200 }, (_, i) => 100 + (i % 50)),
        messageChars: [800],
        maxTokens: 5,
        onDone: (r) => results.push(r),
      });
    submit("p/0", "p");
    kernel.run();
    submit("p.c0/0", "p.c0", "p");
    submit("q/0", "q");
    assert.equal(runtime.scheduler.program("p.c0")?.parentProgramId, "p");
    assert.equal(runtime.scheduler.program("q")?.parentProgramId, null);
    kernel.run();
    assert.ok(results.every((r) => r.ok));
  });
});

/**
 * Trees from the claude-code-subagents preset that launch early: each of its programs that
 * launches sub-agents within its first 4 steps, cut two steps after that launch, as program
 * p<i> (its sub-agents follow from the plan the loop holds, so the ids stay consistent).
 */
function earlyTrees(maxContextTokens: number): Workload {
  const base = createWorkload({
    kind: "preset",
    name: "claude-code-subagents",
    seed: 4,
    maxContextTokens,
  });
  const found: ProgramPlan[] = [];
  let next = 0;
  const nth = (i: number): ProgramPlan => {
    while (found.length <= i) {
      const p = base.programAt(next++);
      const at = p.steps.findIndex((s) => s.spawn !== undefined);
      if (at < 0 || at > 3) continue;
      const steps = p.steps.slice(0, at + 2);
      steps[at + 1] = { ...steps[at + 1], toolMs: 0 };
      delete steps[at + 1].spawn;
      found.push({ ...p, steps });
    }
    return found[i];
  };
  return {
    ...base,
    programAt: (i) => ({ ...nth(i), programId: `p${i}`, index: i, startOffsetMs: i * 200 }),
  };
}

describe("claude-code-subagents in a small simulation", () => {
  const workload = earlyTrees((8000 - 1) * 16);
  const options = {
    workload,
    concurrency: 4,
    maxPrograms: 4,
    numGpuBlocks: 8000,
    warmupMs: 0,
    durationMs: 3_600_000,
  };
  const stepsOf = (records: RunRecords, id: string) =>
    records.steps.filter((s) => s.programId === id).sort((a, b) => a.stepIndex - b.stepIndex);

  for (const link of [true, false]) {
    it(`runs every tree, parents waiting on their sub-agents (link ${link ? "on" : "off"})`, () => {
      const { records, report } = smallRun(
        link ? options : { ...options, workload: { ...workload, subagentLink: false } },
      );
      // The core took every request, a parent link included (a bad one is a 400).
      assert.deepEqual(records.errors, []);
      assert.equal(report.programs_completed_total, 4);
      const plans = Array.from({ length: 4 }, (_, i) => workload.programAt(i));
      const kids = records.subagents ?? [];
      assert.equal(
        kids.length,
        plans.reduce((n, p) => n + subagentCount(p), 0),
      );
      assert.ok(kids.length >= 4, "every tree launched some");
      for (const k of kids) {
        assert.equal(k.outcome, "completed");
        const parent = plans.find((p) => p.programId === k.parentProgramId);
        assert.ok(parent);
        const at = parent.steps.findIndex((s) => s.spawn !== undefined);
        const [launch, resume] = [at, at + 1].map((i) => stepsOf(records, parent.programId)[i]);
        // Launched when the parent's answer arrived; the parent's next call after its end.
        assert.equal(k.launchMs, launch.endMs);
        assert.ok(resume.startMs >= (k.endMs as number), `${k.programId} ended before resume`);
        const plan = parent.steps[at].spawn?.[Number(k.programId.split(".c")[1])];
        assert.equal(stepsOf(records, k.programId).length, plan?.steps.length);
      }
      assert.equal(
        report.steps_completed,
        records.steps.length,
        "sub-agents' calls count in the report's steps",
      );
    });
  }
});
