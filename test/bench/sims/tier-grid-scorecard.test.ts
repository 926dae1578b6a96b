import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { TierRun } from "../../../src/bench/sim-runs.ts";
import type { Result } from "../../../src/bench/sims/tier-grid-report.ts";
import {
  listsOf,
  TIER_GRID_RUNS,
  TIER_GRID_SPEC,
  tierGridRuns,
  tierGridScorecard,
  windowOf,
} from "../../../src/bench/sims/tier-grid-scorecard.ts";
import { ConfigError } from "../../../src/errors.ts";
import { argsOf, testIo } from "./helpers.ts";

const flags = (...argv: string[]) => argsOf(TIER_GRID_SPEC, argv).values;

/** Made-up runs: default 100, tr 120 steps/min (90 with a 200 GiB tier), the oracle 200. */
const made = (spec: TierRun): Result => ({
  spec,
  command: `maitred simulate --router ${spec.router} --kv-offloading-size ${spec.sizeGiB}`,
  stepsPerMin: { default: 100, tr: spec.sizeGiB === 200 ? 90 : 120, oracle: 200 }[spec.router],
  stepP99S: 50,
  longestWaitS: 10,
  prefilled: 1e6,
  hostLoaded: 0,
  hostLoadS: 0,
  ...(spec.programs === undefined
    ? {}
    : {
        batch: {
          makespanS: spec.router === "tr" ? 500 : 1000,
          completionP99S: 400,
          firstResponseSpreadS: 20,
        },
      }),
  wallS: 1,
});

describe("bench:tier-grid's runs", () => {
  it("the grid's axes: the flags, else what saved runs hold, else the defaults", () => {
    const defaults = listsOf(flags(), undefined);
    assert.deepEqual(defaults.sizes, [0, 50, 200, 400]);
    assert.deepEqual(defaults.workloads, ["deepseek", "gemini", "claude-code"]);
    assert.deepEqual(defaults.batchSeeds, [7]);
    const saved = [
      made({ workload: "gemini", seed: 3, router: "tr", sizeGiB: 400, concurrency: 32 }),
      made({ workload: "gemini", seed: 3, router: "oracle", sizeGiB: 0, concurrency: 32 }),
      made({ workload: "gemini", seed: 1, router: "tr", sizeGiB: 50, concurrency: 32 }),
    ];
    const fromSaved = listsOf(flags("--sizes", "7"), saved);
    assert.deepEqual(fromSaved.sizes, [7], "a flag given wins");
    assert.deepEqual(fromSaved.seeds, [1, 3], "sorted");
    assert.deepEqual(listsOf(flags(), saved).sizes, [50, 400], "the oracle's 0 is no tier");
    assert.deepEqual(fromSaved.batchSizes, [], "no batch was saved");
  });

  it("claude-code's window wins over --quick only when given", () => {
    const w = (f: ReturnType<typeof flags>, workload: string) => {
      const x = windowOf(f, workload);
      return `${x.warmup}+${x.duration}`;
    };
    assert.equal(w(flags(), "claude-code"), "1h+3h");
    assert.equal(w(flags(), "deepseek"), "10m+50m");
    assert.equal(w(flags("--quick"), "claude-code"), "2m+8m");
    assert.equal(w(flags("--quick", "--claude-window", "5m+20m"), "claude-code"), "5m+20m");
  });

  it("the batch first, then the grid with the longest windows first; --no-batch drops the batch", () => {
    const f = flags(
      "--sizes",
      "0",
      "--workloads",
      "deepseek,claude-code",
      "--concurrency",
      "8",
      "--seeds",
      "7",
      "--quick",
      "--claude-window",
      "1h+1h",
      "--presets",
      "bounded",
    );
    const runs = tierGridRuns(f, listsOf(f, undefined));
    const batch = runs.filter((r) => r.programs !== undefined);
    assert.deepEqual(
      batch.map((r) => `${r.router} ${r.programs} ${r.concurrency}`),
      ["oracle 32 16", "default 32 16", "tr 32 16", "default 32 16", "tr 32 16"],
    );
    assert.deepEqual(runs.slice(0, 5), batch);
    const grid = runs.slice(5);
    assert.deepEqual(
      grid.map((r) => `${r.workload} ${r.router}`),
      [
        "claude-code oracle",
        "claude-code default",
        "claude-code tr",
        "deepseek oracle",
        "deepseek default",
        "deepseek tr",
      ],
    );
    const noBatch = flags("--sizes", "0", "--no-batch", "--presets", "bounded");
    assert.ok(
      tierGridRuns(noBatch, listsOf(noBatch, undefined)).every((r) => r.programs === undefined),
    );
  });
});

describe("bench:tier-grid's presets", () => {
  it("runs tr once per preset, naming --tail for all but the shipped one, and reads them back", () => {
    const f = flags(
      "--sizes",
      "0",
      "--workloads",
      "deepseek",
      "--concurrency",
      "8",
      "--seeds",
      "7",
      "--no-batch",
    );
    const l = listsOf(f, undefined);
    assert.deepEqual(l.presets, ["bounded", "balanced", "throughput"]);
    const tr = tierGridRuns(f, l).filter((r) => r.router === "tr");
    assert.deepEqual(
      tr.map((r) => r.tail),
      [undefined, "balanced", "throughput"],
    );
    const saved = tr.map((spec) => ({ spec }) as Result);
    assert.deepEqual(listsOf(flags(), saved).presets, ["bounded", "balanced", "throughput"]);
    assert.throws(
      () => listsOf(flags("--presets", "throughput"), undefined),
      (e: unknown) => e instanceof ConfigError && /must include bounded/.test(e.message),
    );
  });
});

describe("bench:tier-grid's scorecard", () => {
  it("runs the grid, prints the report ending on the lowest ratio, and reads it back from its --json", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tier-grid-"));
    try {
      const json = join(dir, "runs.json");
      const argv = [
        "--sizes",
        "0,200",
        "--workloads",
        "deepseek",
        "--concurrency",
        "16",
        "--seeds",
        "7",
        "--batch-sizes",
        "0",
        "--quick",
        "--jobs",
        "2",
        "--presets",
        "bounded",
      ];
      const t = testIo(made);
      const results = await tierGridScorecard(flags(...argv, "--json", json), t.io);
      assert.equal(results.length, 3 + 5);
      assert.equal(t.noted[0], "# 8 runs, 2 at a time\n");
      const out = t.stdout();
      assert.ok(out.startsWith("## tr and default over host KV tiers"));
      assert.ok(out.includes("Windows: deepseek 2 min warm-up + 8 min window."));
      assert.ok(out.includes("### Fixed batch: 32 deepseek programs, 16 at a time"));
      assert.ok(
        out.endsWith(
          "minimum tr ÷ default over the grid: 0.90 (deepseek, 200 GiB, 16 programs, seed 7)\n",
        ),
      );
      const again = testIo<TierRun, Result>(() => {
        throw new Error("--from-json runs nothing");
      });
      await tierGridScorecard(flags("--from-json", json), again.io);
      assert.equal(again.stdout(), out, "the saved runs print the same report");
      assert.deepEqual(again.noted, []);

      const batchOnly = join(dir, "batch.json");
      writeFileSync(
        batchOnly,
        JSON.stringify(results.filter((r) => r.spec.programs !== undefined)),
      );
      await assert.rejects(
        tierGridScorecard(flags("--from-json", batchOnly), again.io),
        ConfigError,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a run's line says its steps/min, or a batch's makespan", () => {
    const grid = made({
      workload: "deepseek",
      seed: 7,
      router: "tr",
      sizeGiB: 50,
      concurrency: 64,
    });
    assert.equal(
      TIER_GRID_RUNS.describe(grid),
      "deepseek tr 50 GiB C=64 seed 7: 120.0 steps/min (1 s wall)",
    );
    const batch = made({
      workload: "deepseek",
      seed: 7,
      router: "tr",
      sizeGiB: 0,
      concurrency: 16,
      programs: 32,
    });
    assert.equal(
      TIER_GRID_RUNS.describe(batch),
      "deepseek tr 0 GiB C=16 seed 7, batch of 32: makespan 500 s (1 s wall)",
    );
  });
});
