import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TierRun } from "../../../src/bench/sim-runs.ts";
import {
  cellsOf,
  type Lists,
  type Result,
  tierGridChart,
  tierGridReport,
} from "../../../src/bench/sims/tier-grid-report.ts";

const WINDOW = { warmup: "10m", duration: "50m" };

const run = (spec: Partial<TierRun>, stepsPerMin: number, batch?: Result["batch"]): Result => ({
  spec: {
    workload: "deepseek",
    seed: 7,
    router: "tr",
    sizeGiB: 0,
    concurrency: 128,
    window: WINDOW,
    ...spec,
  },
  command: `maitred simulate --router ${spec.router ?? "tr"}`,
  stepsPerMin,
  stepP99S: 100,
  longestWaitS: 300,
  prefilled: 2e6,
  hostLoaded: 0,
  hostLoadS: 0,
  ...(batch === undefined ? {} : { batch }),
  wallS: 1,
});

const lists: Lists = {
  sizes: [0, 200],
  workloads: ["deepseek"],
  concurrency: [128],
  seeds: [7],
  presets: ["bounded"],
  batchSizes: [],
  batchSeeds: [],
};

const results = [
  run({ router: "oracle" }, 400),
  run({ router: "default", sizeGiB: 0 }, 200),
  run({ router: "tr", sizeGiB: 0 }, 300),
  run({ router: "default", sizeGiB: 200 }, 250),
  run({ router: "tr", sizeGiB: 200 }, 250),
];

describe("the tier grid's report", () => {
  it("pairs tr with default per size, the oracle only at the largest concurrency", () => {
    const cells = cellsOf(results, lists, "deepseek");
    assert.equal(cells.length, 2);
    assert.equal(cells[0].tr?.stepsPerMin, 300);
    assert.equal(cells[0].def?.stepsPerMin, 200);
    assert.equal(cells[1].oracle?.stepsPerMin, 400, "the oracle has no tier: every size reads it");
  });

  it("prints a table row per cell with tr ÷ default and ÷ oracle, and ends on the grid's lowest ratio", () => {
    const out = tierGridReport(results, lists, ["10 min warm-up + 50 min window"]);
    assert.match(out, /^## tr and default over host KV tiers/);
    assert.match(out, /\| 0 \| 128 \| 7 \| 300\.0 \| 200\.0 \| 1\.50 \| 0\.75 \|/);
    assert.match(out, /\| 200 \| 128 \| 7 \| 250\.0 \| 250\.0 \| 1\.00 \| 0\.63 \|/);
    const last = out.split("\n").at(-1);
    assert.equal(
      last,
      "minimum tr ÷ default over the grid: 1.00 (deepseek, 200 GiB, 128 programs, seed 7)",
    );
    assert.ok(!out.includes("Fixed batch"), "no batch ran: no batch table");
  });

  it("charts tr ÷ default against the tier size, then each workload's frontier, a line per tier", () => {
    const svg = tierGridChart(results, lists);
    assert.equal((svg.match(/<polyline /g) ?? []).length, 1 + lists.sizes.length);
    assert.ok(svg.includes(">deepseek, 128</text>"));
    assert.ok(svg.includes(">200 GiB</text>"));
  });
});
