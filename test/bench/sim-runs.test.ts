import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { HOUR_WINDOW, jobsOf, readRuns, span, tierOptions } from "../../src/bench/sim-runs.ts";
import { ConfigError } from "../../src/errors.ts";

describe("the scorecards' shared run", () => {
  it("a tier run is `maitred simulate` on 2 engines of 26,000 blocks with the run's tier and window", () => {
    const o = tierOptions({
      workload: "deepseek",
      seed: 7,
      router: "tr",
      sizeGiB: 64,
      concurrency: 128,
      window: HOUR_WINDOW,
    });
    assert.deepEqual(o.routers, ["tr"]);
    assert.deepEqual(o.concurrency, [128]);
    assert.equal(o.numBackends, 2);
    assert.equal(o.numGpuBlocks, 26_000);
    assert.equal(o.kvOffloadingSize, 64);
    assert.equal(o.seed, 7);
    assert.equal(o.warmupMs, 10 * 60_000);
    assert.equal(o.durationMs, 50 * 60_000);
    assert.equal(o.maxPrograms, undefined);
  });

  it("a fixed batch takes --programs and no window", () => {
    const o = tierOptions({
      workload: "deepseek",
      seed: 1,
      router: "default",
      sizeGiB: 0,
      concurrency: 64,
      programs: 256,
    });
    assert.equal(o.maxPrograms, 256);
    assert.equal(o.warmupMs, 0);
  });

  it("a bad value is the simulator's own ConfigError", () => {
    assert.throws(
      () =>
        tierOptions({ workload: "deepseek", seed: 1, router: "tr", sizeGiB: -1, concurrency: 8 }),
      ConfigError,
    );
    assert.throws(() => jobsOf("0"), ConfigError);
    assert.equal(jobsOf("3"), 3);
  });

  it("spans read as a reader says them", () => {
    assert.equal(span(2 * 3_600_000), "2 h");
    assert.equal(span(50 * 60_000), "50 min");
    assert.equal(span(90 * 60_000), "90 min");
  });

  it("runs saved by earlier invocations join, a later file's run replacing an earlier one", () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-runs-"));
    try {
      const a = join(dir, "a.json");
      const b = join(dir, "b.json");
      writeFileSync(
        a,
        JSON.stringify([
          { k: 1, v: "old" },
          { k: 2, v: "kept" },
        ]),
      );
      writeFileSync(b, JSON.stringify([{ k: 1, v: "new" }]));
      const runs = readRuns<{ k: number; v: string }>(`${a},${b}`, (r) => r.k);
      assert.deepEqual(
        runs.sort((x, y) => x.k - y.k),
        [
          { k: 1, v: "new" },
          { k: 2, v: "kept" },
        ],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
