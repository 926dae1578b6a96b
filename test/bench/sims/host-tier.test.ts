import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import {
  HOST_TIER_RUNS,
  HOST_TIER_SPEC,
  type HostTierResult,
  type HostTierRun,
  hostTierChart,
  hostTierRuns,
  hostTierScorecard,
  hostTierTable,
} from "../../../src/bench/sims/host-tier.ts";
import { argsOf, testIo } from "./helpers.ts";

const args = (...argv: string[]) => argsOf(HOST_TIER_SPEC, argv);

/** Made-up runs: default gains 10 steps/min per 100 GiB of tier, tr 150, the oracle 200. */
const made = (spec: HostTierRun): HostTierResult => ({
  spec,
  command: `maitred simulate --router ${spec.router} --kv-offloading-size ${spec.sizeGiB}`,
  stepsPerMin: { default: 100 + spec.sizeGiB / 10, tr: 150, oracle: 200 }[spec.router],
  stepP99S: spec.router === "default" ? null : 60,
  longestWaitS: 42,
  prefilled: 3_000_000,
  hostLoaded: spec.sizeGiB * 10_000,
  hostLoadS: 0,
  wallS: 2,
});

describe("bench:host-tier", () => {
  it("per seed the oracle once, then default and tr at every size, in the flags' window", () => {
    const runs = hostTierRuns(args("--sizes", "0,100", "--seeds", "7,1", "--quick"));
    assert.deepEqual(
      runs.map((r) => `${r.seed} ${r.router} ${r.sizeGiB}`),
      [
        "7 oracle 0",
        "7 default 0",
        "7 tr 0",
        "7 default 100",
        "7 tr 100",
        "1 oracle 0",
        "1 default 0",
        "1 tr 0",
        "1 default 100",
        "1 tr 100",
      ],
    );
    assert.ok(runs.every((r) => r.window.warmup === "2m" && r.window.duration === "8m"));
    assert.deepEqual(hostTierRuns(args())[0].window, { warmup: "10m", duration: "60m" });
  });

  it("a seed's table: the ratios against default and the oracle per size, under the oracle's figures", () => {
    const results = hostTierRuns(args("--sizes", "0,100", "--seeds", "7")).map(made);
    const table = hostTierTable(results, "deepseek", 7, [0, 100]);
    const lines = table.split("\n");
    assert.equal(
      lines[0],
      "### deepseek, seed 7: oracle 200.0 steps/min, step p99 60 s, 3.0 M prompt tokens prefilled",
    );
    assert.ok(
      lines.includes(
        "| 0 GiB | 100.0 | 150.0 | 1.50 | 0.75 | 0.50 | – | 60 | 42 | 3.0 / 3.0 | 0.0 / 0.0 |",
      ),
    );
    assert.ok(
      lines.includes(
        "| 100 GiB | 110.0 | 150.0 | 1.36 | 0.75 | 0.55 | – | 60 | 42 | 3.0 / 3.0 | 1.0 / 1.0 |",
      ),
    );
    assert.match(
      lines.at(-1) ?? "",
      /^Commands: `maitred simulate --router tr --kv-offloading-size 100`/,
    );
    assert.throws(() => hostTierTable(results, "deepseek", 1, [0]), /no run deepseek seed 1/);
  });

  it("the chart has a line per router, the oracle's dashed", () => {
    const results = hostTierRuns(args("--sizes", "0,100", "--seeds", "7,1")).map(made);
    const svg = hostTierChart(results, "deepseek", [7, 1], [0, 100]);
    assert.equal(svg.match(/<polyline /g)?.length, 3);
    assert.ok(svg.includes("oracle (no tier)"));
    assert.ok(svg.includes("deepseek, 128 programs: steps/min (mean of seeds 7, 1)"));
  });

  it("the scorecard prints a table per seed and saves runs that --from-json prints again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "host-tier-"));
    try {
      const json = join(dir, "runs.json");
      const t = testIo(made);
      await hostTierScorecard(args("--sizes", "0,50", "--seeds", "7,1", "--json", json), t.io);
      assert.equal(t.ran[0].length, 10);
      const out = t.stdout();
      assert.equal(out.match(/^### deepseek, seed /gm)?.length, 2);
      const again = testIo<HostTierRun, HostTierResult>(() => {
        throw new Error("--from-json runs nothing");
      });
      await hostTierScorecard(
        args("--sizes", "0,50", "--seeds", "7,1", "--from-json", json),
        again.io,
      );
      assert.equal(again.stdout(), out);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a run's line names its router, tier, seed and steps/min", () => {
    const r = made({
      workload: "deepseek",
      seed: 7,
      router: "tr",
      sizeGiB: 50,
      concurrency: 128,
      window: { warmup: "1m", duration: "2m" },
    });
    assert.equal(HOST_TIER_RUNS.describe(r), "tr 50 GiB seed 7: 150.0 steps/min (2 s wall)");
  });
});
