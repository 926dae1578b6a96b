import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createEngine } from "../../src/engine/engine.ts";
import type { RequestOutput } from "../../src/engine/types.ts";
import { attachEngine, createEventKernel } from "../../src/engine/virtual-driver.ts";
import { request, smallConfig, tokens } from "./engine-helpers.ts";

const submitOf = (id: string, n: number, base: number, maxTokens = 3) => {
  const { arrivalTime: _t, ...rest } = request(id, tokens(n, base), { maxTokens });
  return rest;
};

describe("event kernel", () => {
  it("runs events in time order and same-time events in scheduling order", () => {
    const k = createEventKernel();
    const seen: string[] = [];
    k.schedule(2, () => seen.push("t2"));
    k.schedule(1, () => seen.push("t1-first"));
    k.schedule(1, () => seen.push("t1-second"));
    k.schedule(0, () => seen.push("t0"));
    assert.equal(k.run(), 4);
    assert.deepEqual(seen, ["t0", "t1-first", "t1-second", "t2"]);
    assert.equal(k.now, 2);
  });

  it("stops at `until`, leaves later events queued and advances now to until", () => {
    const k = createEventKernel();
    const seen: number[] = [];
    k.schedule(1, () => seen.push(1));
    k.schedule(5, () => seen.push(5));
    k.run(3);
    assert.deepEqual(seen, [1]);
    assert.equal(k.now, 3);
    assert.equal(k.pending, 1);
    k.run();
    assert.deepEqual(seen, [1, 5]);
  });

  it("lets events schedule more events, including at the current time", () => {
    const k = createEventKernel();
    const seen: string[] = [];
    k.schedule(1, () => {
      seen.push("a");
      k.after(0, () => seen.push("a-now"));
      k.after(1, () => seen.push("a-later"));
    });
    k.schedule(1, () => seen.push("b"));
    k.run();
    assert.deepEqual(seen, ["a", "b", "a-now", "a-later"]);
    assert.equal(k.now, 2);
  });

  it("skips cancelled events and counts only live ones as pending", () => {
    const k = createEventKernel();
    let ran = false;
    const h = k.schedule(1, () => {
      ran = true;
    });
    assert.equal(k.pending, 1);
    h.cancel();
    h.cancel();
    assert.equal(k.pending, 0);
    k.run();
    assert.equal(ran, false);
  });

  it("refuses to schedule in the past", () => {
    const k = createEventKernel({ start: 10 });
    assert.throws(() => k.schedule(9, () => {}), RangeError);
  });
});

describe("virtual engine adapter", () => {
  it("delivers each step's outputs at start + duration and never overlaps steps", () => {
    const k = createEventKernel();
    const engine = createEngine(smallConfig({ numGpuBlocks: 64, maxModelLen: 512 }));
    const times: number[] = [];
    const steps: Array<{ start: number; end: number }> = [];
    const ve = attachEngine(k, engine, {
      onOutput: (_o, t) => times.push(t),
      onStep: (r, end) => steps.push({ start: r.startTime, end }),
    });
    k.schedule(0.25, () => ve.submit(submitOf("a", 40, 1, 4)));
    k.run();
    assert.equal(times.length, 4);
    assert.equal(steps[0].start, 0.25);
    for (const s of steps) assert.ok(s.end > s.start);
    for (let i = 1; i < steps.length; i++) {
      assert.equal(steps[i].start, steps[i - 1].end, "next step starts when the previous ends");
    }
    assert.deepEqual(
      times,
      steps.map((s) => s.end),
    );
    assert.equal(ve.busy, false);
  });

  it("batches requests that arrive at the same time into one first step", () => {
    const k = createEventKernel();
    const engine = createEngine(smallConfig({ numGpuBlocks: 64, maxModelLen: 512 }));
    const firstStepTokens: number[] = [];
    const ve = attachEngine(k, engine, {
      onStep: (r) => {
        if (firstStepTokens.length === 0) firstStepTokens.push(r.scheduledTokens);
      },
    });
    k.schedule(1, () => ve.submit(submitOf("a", 10, 1)));
    k.schedule(1, () => ve.submit(submitOf("b", 20, 100)));
    k.run();
    assert.deepEqual(firstStepTokens, [30]);
  });

  it("drops outputs of a request aborted while its step is in flight", () => {
    const k = createEventKernel();
    const engine = createEngine(smallConfig({ numGpuBlocks: 64, maxModelLen: 512 }));
    const got: RequestOutput[] = [];
    const ve = attachEngine(k, engine, { onOutput: (o) => got.push(o) });
    ve.submit(submitOf("a", 10, 1, 50));
    k.run(0.001);
    assert.equal(ve.busy, true);
    ve.abort("a");
    k.run();
    assert.equal(got.length, 0);
    assert.equal(engine.stats().kvCacheUsage, 0);
  });

  it("drives several engines interleaved on one kernel, deterministically", () => {
    const play = () => {
      const k = createEventKernel();
      const log: string[] = [];
      for (const name of ["e0", "e1", "e2"]) {
        const engine = createEngine(smallConfig({ numGpuBlocks: 64, maxModelLen: 512 }));
        const ve = attachEngine(k, engine, {
          onOutput: (o, t) => log.push(`${name}:${o.id}:${o.completionTokens}@${t.toFixed(6)}`),
        });
        const n = name === "e1" ? 300 : 30;
        k.schedule(0, () => ve.submit(submitOf(`${name}-r`, n, 1, 5)));
      }
      k.run();
      return log;
    };
    const first = play();
    assert.equal(first.length, 15);
    const e1First = first.findIndex((l) => l.startsWith("e1"));
    assert.ok(e1First > 0, "e1's longer prefill finishes after the others' first tokens");
    const times = first.map((l) => Number(l.split("@")[1]));
    for (let i = 1; i < times.length; i++)
      assert.ok(times[i] >= times[i - 1], "delivery in time order");
    assert.deepEqual(play(), first);
  });

  it("restarts stepping when a request is submitted from an output callback", () => {
    const k = createEventKernel();
    const engine = createEngine(smallConfig({ numGpuBlocks: 64, maxModelLen: 512 }));
    const finished: string[] = [];
    const ve = attachEngine(k, engine, {
      onOutput: (o) => {
        if (!o.finishReason) return;
        finished.push(o.id);
        if (o.id === "turn1") ve.submit(submitOf("turn2", 12, 500, 2));
      },
    });
    ve.submit(submitOf("turn1", 12, 1, 2));
    k.run();
    assert.deepEqual(finished, ["turn1", "turn2"]);
  });
});
