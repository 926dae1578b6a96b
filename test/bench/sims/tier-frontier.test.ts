import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TierResult, TierRun } from "../../../src/bench/sim-runs.ts";
import {
  type FrontierLists,
  type FrontierPoint,
  frontierOf,
  frontierPoints,
  frontierTable,
} from "../../../src/bench/sims/tier-frontier.ts";

const run = (spec: Partial<TierRun>, stepsPerMin: number, stepP99S: number): TierResult => ({
  spec: { workload: "deepseek", seed: 7, router: "tr", sizeGiB: 0, concurrency: 128, ...spec },
  command: "maitred simulate",
  stepsPerMin,
  stepP99S,
  longestWaitS: stepP99S + 10,
  prefilled: 0,
  hostLoaded: 0,
  hostLoadS: 0,
  wallS: 1,
});

const lists: FrontierLists = {
  sizes: [0],
  concurrency: [128],
  seeds: [7, 8],
  presets: ["bounded", "throughput"],
};

const point = (name: string, stepsPerMin: number, stepP99S: number, oracle = false) =>
  ({ name, stepsPerMin, stepP99S, longestWaitS: null, oracle }) satisfies FrontierPoint;

describe("the throughput/tail frontier", () => {
  it("keeps the points no other beats on both steps/min and step p99, and never the oracle", () => {
    const on = frontierOf([
      point("engine alone", 100, 50),
      point("tr bounded", 200, 80),
      point("tr balanced", 190, 90), // beaten by bounded on both
      point("tr throughput", 230, 200),
      point("oracle", 500, 10, true),
    ]);
    assert.deepEqual([...on].sort(), ["engine alone", "tr bounded", "tr throughput"]);
  });

  it("a point equal to another on both is not beaten by it", () => {
    const on = frontierOf([point("a", 100, 50), point("b", 100, 50)]);
    assert.deepEqual([...on].sort(), ["a", "b"]);
  });

  it("averages each point over the seeds, a shipped-preset run counting as bounded", () => {
    const results = [
      run({ router: "default" }, 100, 50),
      run({ router: "default", seed: 8 }, 120, 70),
      run({}, 200, 80),
      run({ seed: 8 }, 220, 100),
      run({ tail: "throughput" }, 260, 300),
      run({ router: "default", sizeGiB: 200 }, 999, 1),
      run({ router: "oracle" }, 400, 20),
    ];
    const points = frontierPoints(results, lists, "deepseek", 0, 128);
    assert.deepEqual(
      points.map((p) => [p.name, p.stepsPerMin, p.stepP99S, p.longestWaitS]),
      [
        ["engine alone", 110, 60, 80],
        ["tr bounded", 210, 90, 110],
        ["tr throughput", 260, 300, 310],
        ["oracle (unbounded KV)", 400, 20, 30],
      ],
    );
    const table = frontierTable(results, lists, "deepseek");
    assert.match(
      table,
      /\| 0 \| 128 \| tr bounded \| 210\.0 \| 1\.91 \| 90 \| 1\.50 \| 110 \| yes \|/,
    );
    assert.match(
      table,
      /\| oracle \(unbounded KV\) \| 400\.0 \| 3\.64 \| 20 \| 0\.33 \| 30 \| bound \|/,
    );
  });
});
