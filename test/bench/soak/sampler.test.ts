import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { SoakRouter } from "../../../src/bench/soak/fleet.ts";
import { createInvariantChecker } from "../../../src/bench/soak/invariants.ts";
import { CHAT_PATH, createLedger } from "../../../src/bench/soak/ledger.ts";
import {
  addOrNull,
  combineSample,
  createSampler,
  metricsReading,
  toRouterSample,
} from "../../../src/bench/soak/sampler.ts";
import { createSoakState } from "../../../src/bench/soak/state.ts";

describe("a router's views as a sample", () => {
  it("reads /programs and /backends into the fields the checks read", () => {
    const s = toRouterSample(
      { p1: { status: "reasoning", state: "paused", in_flight: 1, paused_since: 5 } },
      { "http://b1": { used_tokens: 12 } },
      99,
    );
    assert.deepEqual(s, {
      atMs: 99,
      programs: [{ key: "p1", status: "reasoning", state: "paused", inFlight: 1, pausedSince: 5 }],
      usedTokens: { "http://b1": 12 },
    });
  });

  it("reads the heap in MB and the event-loop delay in ms from /metrics, null when absent", () => {
    const text = "nodejs_heap_size_used_bytes 3145728\nnodejs_eventloop_lag_p99_seconds 0.025\n";
    assert.deepEqual(metricsReading(text), { heapMb: 3, lagMs: 25 });
    assert.deepEqual(metricsReading(""), { heapMb: null, lagMs: null });
  });

  it("sums the routers' figures, unknown if any router's is, and keeps the worst delay", () => {
    assert.equal(addOrNull([1, 2.5]), 3.5);
    assert.equal(addOrNull([1, null]), null);
    assert.equal(addOrNull([]), 0);
    const r = (cpuS: number | null, lagMs: number | null) => ({
      rssMb: 100,
      cpuS,
      heapMb: 10,
      lagMs,
    });
    const parts = {
      tS: 5,
      downCpuS: 4,
      livePrograms: 3,
      programsSeen: 7,
      requests: 20,
      cells: [],
    };
    const s = combineSample({ ...parts, readings: [r(1, 12), r(2, null)] });
    assert.deepEqual(
      [s.rss_mb, s.cpu_s, s.heap_mb, s.lag_p99_ms],
      [200, 7, 20, 12],
      "a cell down still counts the CPU its killed processes used",
    );
    const unknown = combineSample({ ...parts, readings: [r(null, null)] });
    assert.deepEqual([unknown.cpu_s, unknown.lag_p99_ms], [null, null]);
  });
});

describe("the sampler against a router's endpoints", () => {
  let server: Server;
  let url = "";
  before(async () => {
    server = createServer((req, res) => {
      if (req.url === "/programs")
        res.end(
          JSON.stringify({
            a: { status: "acting", state: "active", in_flight: 0, paused_since: null },
          }),
        );
      else if (req.url === "/backends")
        res.end(JSON.stringify({ "http://b1": { used_tokens: -5 } }));
      else res.end("nodejs_heap_size_used_bytes 2097152\nnodejs_eventloop_lag_p99_seconds 0.02\n");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  const router = (name: string, over: Partial<SoakRouter> = {}): SoakRouter => ({
    name,
    backendUrls: [],
    port: 0,
    url,
    // This process: /proc has its memory and CPU.
    pid: process.pid,
    proc: { url, pid: process.pid, close: async () => {}, kill: async () => {} },
    up: true,
    checker: createInvariantChecker({ maxRequestMs: 1_000, maxPauseMs: 1_000, slackMs: 0 }),
    cpuBeforeS: 0,
    restarts: 0,
    last: { rssMb: null, live: 0 },
    ...over,
  });

  it("checks each cell that is up, says its violations, and keeps one summed sample", async () => {
    const lines: string[] = [];
    const st = createSoakState(Date.now(), (l) => lines.push(l));
    st.programsSeen = 4;
    st.loopPrograms = () => 6;
    const ledger = createLedger();
    ledger.count(CHAT_PATH);
    const down = router("cell-b", { up: false, cpuBeforeS: 2 });
    const sampler = createSampler({ routers: [router("cell-a"), down] }, ledger, st, 2);
    await sampler.take();
    assert.equal(lines.length, 1);
    assert.match(
      lines[0],
      /^VIOLATION at \d+\.\d s books: cell-a: backend http:\/\/b1 used_tokens -5 < 0$/,
    );
    assert.equal(st.samples.length, 1);
    const s = st.samples[0];
    assert.equal(s.heap_mb, 2);
    assert.equal(s.lag_p99_ms, 20);
    assert.ok(s.rss_mb !== null && s.rss_mb > 0, "this process's RSS");
    assert.ok(s.cpu_s !== null && s.cpu_s >= 2, "the down cell's CPU counts");
    assert.deepEqual([s.live_programs, s.programs_seen, s.requests], [1, 10, 1]);
    assert.deepEqual(
      s.cells.map((c) => [c.name, c.rss_mb === null, c.live_programs]),
      [
        ["cell-a", false, 1],
        ["cell-b", true, 0],
      ],
    );
    assert.deepEqual(
      st.lastPrograms.map((p) => p.key),
      ["a"],
    );
    assert.deepEqual([ledger.sent.get("/programs"), ledger.sent.get("/backends")], [1, 1]);
  });

  it("says a sample that failed and skips it, the request it lost given up", async () => {
    const lines: string[] = [];
    const st = createSoakState(Date.now(), (l) => lines.push(l));
    const ledger = createLedger();
    const gone = router("router", { url: "http://127.0.0.1:1" });
    await createSampler({ routers: [gone] }, ledger, st, 0).take();
    assert.equal(st.samples.length, 0);
    assert.match(lines[0], /^sample failed at /);
    assert.equal(ledger.gaveUp.get("/programs"), 1);
  });
});
