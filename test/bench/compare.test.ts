import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import {
  type BackendStarter,
  type RouterStarter,
  runCompare,
  simBackendArgs,
} from "../../src/bench/compare.ts";
import { inProcessStarters, startRouterProcess } from "../../src/bench/start-router-for.ts";
import { createVirtualClock } from "../../src/runtime/clock.ts";

describe("compare", () => {
  /**
   * Comparisons run in this process on one virtual clock (src/runtime/clock.ts) shared by the
   * bench driver, the routers and the simulated engines, at the shipped time scale (1): engine
   * steps, tool and think times and router ticks are jumps of the clock, taken once the loopback
   * I/O between them has settled. Only the last test starts processes, to show that `bench
   * compare` runs `maitred serve` and `maitred sim-backend` as users run them.
   */
  const clock = createVirtualClock();
  after(() => clock.stop());
  const inProcess = inProcessStarters(clock);

  /** Chat sessions: a few short multi-turn programs, each turn extending the last. */
  const CHAT = { kind: "preset", name: "chat" } as const;

  describe("bench compare", () => {
    it("runs the same workload against every mode on fresh backends and reports each", async () => {
      const routed: { mode: string; backends: string[] }[] = [];
      // Stand-in router: forwards nothing, just points the bench at the first backend.
      const startRouter: RouterStarter = async (mode, backends, _scale, kvBytesPerToken) => {
        routed.push({ mode, backends });
        assert.equal(kvBytesPerToken, null, "no host tier: nothing to size");
        return { url: backends[0], close: async () => {} };
      };
      const started: string[] = [];
      let open = 0;
      const startBackend: BackendStarter = async (settings) => {
        const backend = await inProcess.startBackend(settings);
        started.push(backend.url);
        open++;
        return {
          url: backend.url,
          close: async () => {
            open--;
            await backend.close();
          },
        };
      };
      const seen: string[] = [];
      const reports = await runCompare({
        workload: { ...CHAT, seed: 4 },
        concurrency: 2,
        timeScale: 1,
        warmupMs: 0,
        maxPrograms: 3,
        numBackends: 1,
        numGpuBlocks: 4000,
        modes: ["direct", "tr"],
        extraUrls: [],
        progress: false,
        clock,
        startRouter,
        startBackend,
        onRun: (r) => seen.push(r.router),
      });
      assert.deepEqual(seen, ["direct", "tr"]);
      assert.deepEqual(
        routed.map((r) => r.mode),
        ["tr"],
      );
      assert.equal(routed[0].backends.length, 1);
      assert.equal(new Set(started).size, 2, "each mode got a backend of its own");
      assert.deepEqual(routed[0].backends, [started[1]]);
      assert.equal(open, 0, "every backend was closed");
      for (const r of reports) {
        assert.equal(r.errors_total, 0, `${r.router}: ${JSON.stringify(r.errors)}`);
        assert.equal(r.programs_completed_total, 3);
        assert.equal(r.batch?.completed, 3, `${r.router}: the batch of --programs 3`);
        assert.equal(r.batch?.makespan_ms, r.window_ms.end, `${r.router}: ends with its batch`);
      }
      assert.equal(
        reports[0].steps_completed,
        reports[1].steps_completed,
        "same workload, same steps",
      );
      assert.equal(reports[0].prompt_tokens.total, reports[1].prompt_tokens.total);
      for (const r of reports) {
        const e = r.engine_prompt_tokens;
        assert.ok(e, `${r.router}: the engines' counters were read`);
        assert.equal(e.host_loaded, 0, "no tier, no loads");
        assert.equal(e.gpu_hits + e.prefilled, e.queried);
      }
    });

    it("with a host tier: the backends get it, the router the model's bytes per token, and the report the engines' own split of prompt tokens", async () => {
      const told: (number | null)[] = [];
      const startRouter: RouterStarter = async (_mode, backends, _scale, kvBytesPerToken) => {
        told.push(kvBytesPerToken);
        return { url: backends[0], close: async () => {} };
      };
      const tiers: (number | undefined)[] = [];
      const reports = await runCompare({
        workload: { ...CHAT, seed: 4 },
        concurrency: 4,
        timeScale: 1,
        warmupMs: 0,
        maxPrograms: 8,
        numBackends: 1,
        // Too few blocks for four chats: prefixes leave the GPU between turns.
        numGpuBlocks: 300,
        profile: "llama-3.1-8b-h100",
        kvOffloadingSize: 1,
        modes: ["direct", "tr"],
        extraUrls: [],
        progress: false,
        clock,
        startRouter,
        startBackend: (settings) => {
          tiers.push(settings.kvOffloadingSize);
          return inProcess.startBackend(settings);
        },
      });
      assert.deepEqual(tiers, [1, 1]);
      assert.deepEqual(told, [2 * 32 * 8 * 128 * 2], "Llama-3.1-8B's 128 KiB per token");
      for (const r of reports) {
        const e = r.engine_prompt_tokens;
        assert.ok(e, `${r.router}: the engines' counters were read`);
        assert.ok(e.host_loaded > 0, `${r.router}: evicted prefixes came back from host memory`);
        assert.ok(e.host_load_s > 0);
        assert.ok(e.queried >= r.prompt_tokens.total, "re-admissions count again");
        // The client's cached tokens are the GPU hits and host loads of each first admission.
        assert.ok(e.gpu_hits + e.host_loaded >= (r.prompt_tokens.cached ?? 0));
      }
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

    it("hands each simulated backend its settings as `maitred sim-backend` flags", () => {
      assert.deepEqual(
        simBackendArgs({
          host: "127.0.0.1",
          port: 0,
          timeScale: 20,
          profile: "llama-3.1-8b-h100",
          blockSize: 16,
          enablePromptTokensDetails: true,
          seed: 1,
          numGpuBlocks: 400,
          maxModelLen: 6384,
        }),
        [
          ...["--host", "127.0.0.1", "--port", "0", "--time-scale", "20"],
          ...["--profile", "llama-3.1-8b-h100", "--block-size", "16"],
          ...["--enable-prompt-tokens-details", "--seed", "1"],
          ...["--num-gpu-blocks", "400", "--max-model-len", "6384"],
        ],
      );
    });
  });

  describe("bench compare with maitred in front", () => {
    it("every step passes through the real router in each mode and programs complete", async () => {
      const reports = await runCompare({
        workload: { ...CHAT, seed: 5 },
        concurrency: 3,
        timeScale: 1,
        warmupMs: 0,
        maxPrograms: 4,
        numBackends: 2,
        modes: ["tr", "default"],
        extraUrls: [],
        progress: false,
        clock,
        ...inProcess,
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

    it("routers and backends run as their own processes, as users run them", async () => {
      // Real processes keep real time: a time scale of 100 makes the one short chat session
      // take a second or two. This test is about the process boundary, not about the numbers. A
      // higher scale shrinks the router's tick to a few milliseconds, and on a busy machine a
      // poll that misses a few such ticks in a row marks the one backend unhealthy (a 503).
      const reports = await runCompare({
        // Seed 16's session: three turns, 3 s of thinking between them, so the run is the
        // processes' start and stop more than the chat.
        workload: { ...CHAT, seed: 16 },
        concurrency: 1,
        timeScale: 100,
        warmupMs: 0,
        maxPrograms: 1,
        numBackends: 1,
        modes: ["tr"],
        extraUrls: [],
        progress: false,
        startRouter: startRouterProcess,
      });
      assert.equal(reports.length, 1);
      assert.equal(reports[0].errors_total, 0, JSON.stringify(reports[0].errors));
      assert.equal(reports[0].programs_completed_total, 1);
      assert.ok(reports[0].steps_completed > 0);
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

    it("hands the scaled times to `maitred serve` in seconds, after the tail preset by name", async () => {
      const { resolveRouterConfig } = await import("../../src/config/load-config.ts");
      const { scaledTimeFlags, scaleRouterTimes } = await import(
        "../../src/bench/start-router-for.ts"
      );
      const c = scaleRouterTimes(resolveRouterConfig(), 20);
      const flags = scaledTimeFlags(c);
      assert.deepEqual(flags.slice(0, 2), ["--tail", c.tail]);
      const at = flags.indexOf("--scheduler-interval");
      assert.equal(Number(flags[at + 1]), c.schedulerIntervalMs / 1000);
      assert.equal(flags.length, 2 + 2 * 6, "the preset and six scaled times");
    });
  });
});
