import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  benchTickSize,
  heapPerProgram,
  memoryLine,
  type TickResult,
  tickLine,
} from "../../../src/bench/overhead/tick-bench.ts";

describe("bench:tick's storms", () => {
  it("the squeeze pauses programs, the relief resumes some, the lending world lends", () => {
    const r = benchTickSize(100, { backends: 4, repeats: 1, steadyTicks: 1 });
    assert.equal(r.programs, 100);
    assert.equal(r.backends, 4);
    assert.ok(r.pausedInStorm > 0, "a squeeze to 90 % pauses programs");
    assert.ok(r.resumedInStorm > 0, "capacity back at 120 % resumes some");
    assert.ok(r.resumedInStorm <= r.pausedInStorm, "no more resumed than were paused");
    assert.ok(r.lentInStorm > 0, "idle programs lend their room at the first tick");
  });
});

describe("bench:tick's heap per program", () => {
  it("is the heap the world adds over the programs it tracks, read after collections", () => {
    let gcs = 0;
    const heap = [1_000_000, 1_000_000 + 50 * 1_500];
    const m = heapPerProgram(
      50,
      2,
      () => gcs++,
      () => heap.shift() ?? assert.fail("heap read more than twice"),
    );
    assert.deepEqual(m, { programs: 50, bytesPerProgram: 1_500 });
    assert.equal(gcs, 4, "twice before, twice after");
  });

  it("is not measured without a gc to call", () => {
    assert.equal(heapPerProgram(50, 2, undefined), null);
    assert.equal(memoryLine(null), "memory: run with node --expose-gc to measure heap per program");
    assert.equal(
      memoryLine({ programs: 50, bytesPerProgram: 1499.6 }),
      "memory: 1500 bytes per tracked program (50 programs)",
    );
  });
});

describe("bench:tick's line", () => {
  it("every figure of a size, in order", () => {
    const r: TickResult = {
      programs: 300,
      backends: 64,
      pauseStormTickMs: 1.126,
      steadyTickMsMedian: 2.9944,
      steadyTickMsP99: 5.5371,
      resumeStormTickMs: 0.4249,
      turnWithQueueUs: 68.54,
      pausedInStorm: 101,
      markedInStorm: 0,
      resumedInStorm: 36,
      lendStormTickMs: 0.391,
      lentInStorm: 213,
    };
    assert.equal(
      tickLine(r),
      "300 programs / 64 backends: pause-storm tick 1.13 ms (101 paused, 0 marked), steady tick median 2.994 ms p99 5.537 ms, resume-storm tick 0.42 ms (36 resumed), lend-storm tick 0.39 ms (213 lent), request turn with queue 68.5 µs",
    );
  });
});
