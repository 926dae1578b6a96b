import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type RouterStarter, runCompare } from "../../src/bench/compare.ts";
import { startRouterProcess } from "../../src/bench/start-router-for.ts";

/** Engines and tools run this many times faster than real time. */
const TIME_SCALE = 1000;

describe("bench compare", () => {
  it("runs the same workload against every mode on fresh backends and reports each", async () => {
    const routed: { mode: string; backends: string[] }[] = [];
    // Stand-in router: forwards nothing, just points the bench at the first backend.
    const startRouter: RouterStarter = async (mode, backends) => {
      routed.push({ mode, backends });
      return { url: backends[0], close: async () => {} };
    };
    const seen: string[] = [];
    const reports = await runCompare({
      workload: { kind: "preset", name: "search-agent", seed: 4 },
      concurrency: 2,
      timeScale: TIME_SCALE,
      warmupMs: 0,
      maxPrograms: 3,
      numBackends: 1,
      numGpuBlocks: 4000,
      modes: ["direct", "tr"],
      extraUrls: [],
      progress: false,
      startRouter,
      onRun: (r) => seen.push(r.router),
    });
    assert.deepEqual(seen, ["direct", "tr"]);
    assert.deepEqual(
      routed.map((r) => r.mode),
      ["tr"],
    );
    assert.equal(routed[0].backends.length, 1);
    for (const r of reports) {
      assert.equal(r.errors_total, 0, `${r.router}: ${JSON.stringify(r.errors)}`);
      assert.equal(r.programs_completed_total, 3);
    }
    assert.equal(
      reports[0].steps_completed,
      reports[1].steps_completed,
      "same workload, same steps",
    );
    assert.equal(reports[0].prompt_tokens.total, reports[1].prompt_tokens.total);
  });

  it("direct with several backends is a configuration error", async () => {
    await assert.rejects(
      runCompare({
        workload: { kind: "preset", name: "swe-bash" },
        concurrency: 1,
        timeScale: 1,
        warmupMs: 0,
        maxPrograms: 1,
        numBackends: 2,
        modes: ["direct"],
        extraUrls: [],
        progress: false,
        startRouter: async () => ({ url: "http://unused", close: async () => {} }),
      }),
      /direct.*--num-backends 1/,
    );
  });
});

describe("bench compare with maitred in front", () => {
  it("routers and backends run as their own processes; every step passes and programs complete", async () => {
    const reports = await runCompare({
      workload: { kind: "preset", name: "search-agent", seed: 5 },
      concurrency: 3,
      timeScale: TIME_SCALE,
      warmupMs: 0,
      maxPrograms: 4,
      numBackends: 2,
      modes: ["tr", "default"],
      extraUrls: [],
      progress: false,
      startRouter: startRouterProcess,
    });
    assert.deepEqual(
      reports.map((r) => r.router),
      ["tr", "default"],
    );
    for (const r of reports) {
      assert.equal(r.errors_total, 0, `${r.router}: ${JSON.stringify(r.errors)}`);
      assert.equal(r.programs_completed_total, 4);
      assert.ok((r.prompt_tokens.cache_hit_rate ?? 0) > 0.5, `${r.router} hit rate`);
    }
  });
});

describe("scaleRouterTimes", () => {
  it("runs the router's ticks and timeouts at the bench's time scale", async () => {
    const { resolveRouterConfig } = await import("../../src/config/load-config.ts");
    const { scaleRouterTimes } = await import("../../src/bench/start-router-for.ts");
    const base = resolveRouterConfig();
    const c = scaleRouterTimes(base, 20);
    assert.equal(c.schedulerIntervalMs, base.schedulerIntervalMs / 20);
    assert.equal(c.maxPauseMs, base.maxPauseMs / 20);
    assert.equal(c.idleTimeoutMs, base.idleTimeoutMs / 20);
    assert.equal(c.ageingMs, base.ageingMs / 20);
    assert.equal(c.lendMaxHoldMs, base.lendMaxHoldMs / 20);
    assert.equal(c.placement, base.placement, "non-time settings untouched");
    assert.equal(scaleRouterTimes(base, 1), base);
  });
});
