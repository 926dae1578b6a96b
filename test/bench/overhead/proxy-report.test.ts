import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { phasesReport, tokensPreamble } from "../../../src/bench/overhead/proxy-report.ts";

const run = { router: "tr", upstreamStream: "always", requests: 20, seconds: 0.2, connections: 2 };

describe("bench:proxy's tokens preamble", () => {
  const t = {
    commandLine: "node scripts/bench-proxy.ts --phases tokens",
    date: "2026-01-02",
    routerArgs: ["--router", "tr"],
    seconds: 4,
    intervalMs: "0",
    profiled: false,
  };

  it("names the command, the router's flags and the engine step", () => {
    const lines = tokensPreamble(t);
    assert.equal(lines.length, 2);
    assert.equal(
      lines[0],
      "`node scripts/bench-proxy.ts --phases tokens`, 2026-01-02: `maitred serve --router tr` in its own process, load from another, 4 s per run; vLLM-like engine steps every turn of its event loop.",
    );
    assert.match(lines[1], /^Router CPU: utime \+ stime/);
    assert.match(tokensPreamble({ ...t, intervalMs: "5" })[0], /engine steps every 5 ms\.$/);
  });

  it("says when the router ran under the profiler", () => {
    assert.equal(
      tokensPreamble({ ...t, profiled: true })[2],
      "The router ran under the CPU profiler: its CPU figures include the profiler's.",
    );
  });
});

describe("bench:proxy's router-in-process phases", () => {
  it("a line per figure, what the router added, and the same in the summary", () => {
    const { lines, summary } = phasesReport(
      {
        direct: {
          latency: { p50_ms: 0.1, p99_ms: 1 },
          throughput: { rps: 10_000, n: 2_000 },
          sse: { chunks_per_s: 400_000, mb_per_s: 50 },
        },
        router: {
          latency: { p50_ms: 0.6, p99_ms: 3 },
          throughput: { rps: 1_000, n: 200, router_cpu_s: 0.1 },
          sse: { chunks_per_s: 100_000, mb_per_s: 12.5 },
          body_kept: { p50_ms: 20, bytes: 380 * 1024 },
          body_changed: { p50_ms: 25, bytes: 380 * 1024 },
        },
      },
      run,
    );
    assert.deepEqual(lines, [
      "maitred proxy overhead, fast upstream, router in this process (mode tr, --upstream-stream always, loopback, 20 sequential requests, 0.2s load phases)",
      "  latency p50   direct 0.100 ms   router 0.600 ms   added 0.500 ms",
      "  latency p99   direct 1.000 ms   router 3.000 ms   added 2.000 ms",
      "  throughput    direct 10000 req/s   router 1000 req/s   (2 connections)",
      "  router CPU    500.0 µs per request on its thread → 2000 req/s per core",
      "  SSE           direct 400000 chunks/s (50.0 MB/s)   router 100000 chunks/s (12.5 MB/s)",
      "  large body    380 KiB through the router: forwarded as it is 20.000 ms p50, changed by maitred 25.000 ms p50 (1.25×)",
    ]);
    assert.deepEqual(summary.throughput, {
      direct_rps: 10_000,
      router_rps: 1_000,
      router_cpu_us_per_request: 500,
    });
    assert.equal(summary.latency?.added_p50_ms, 0.5);
    assert.deepEqual(summary.body, {
      bytes: 380 * 1024,
      kept_p50_ms: 20,
      changed_p50_ms: 25,
      ratio: 1.25,
    });
  });

  it("a phase that did not run has no line and no figure", () => {
    const { lines, summary } = phasesReport(
      {
        direct: { latency: { p50_ms: 1, p99_ms: 2 } },
        router: { latency: { p50_ms: 1, p99_ms: 2 } },
      },
      run,
    );
    assert.equal(lines.length, 3);
    assert.deepEqual(Object.keys(summary), ["latency"]);
  });
});
