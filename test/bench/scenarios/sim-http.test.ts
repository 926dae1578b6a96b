import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { Pool } from "undici";
import {
  runSimHttpMode,
  type SimHttpResult,
  simHttpJson,
  simHttpLine,
} from "../../../src/bench/scenarios/sim-http.ts";
import { startSimBackend } from "../../../src/sim-server/start-sim-backend.ts";

/** A clock that moves 1 ms each time it is read: the run's length counts reads, not time. */
function readCountingClock() {
  let t = 0;
  return () => ++t;
}

/** `pool`, counting the requests sent through it. */
function counted(pool: Pool) {
  const c = {
    sent: 0,
    bodies: [] as { max_tokens: number; stream: boolean }[],
    request: ((opts: Parameters<Pool["request"]>[0]) => {
      c.sent++;
      c.bodies.push(JSON.parse(String(opts.body)));
      return pool.request(opts);
    }) as Pool["request"],
  };
  return c;
}

describe("bench:sim-http's load", () => {
  it("counts only the requests after the warm-up, every one answered by the simulated backend", async () => {
    const backend = await startSimBackend({ port: 0, timeScale: 10000 });
    const pool = new Pool(backend.url, { connections: 2, pipelining: 1 });
    try {
      const c = counted(pool);
      const o = { seconds: 0.04, warmupS: 0.01, connections: 2, stream: true };
      const r = await runSimHttpMode(c, o, readCountingClock());
      assert.equal(r.mode, "stream");
      assert.equal(r.errors, 0);
      assert.ok(r.requests > 0, "no request was measured");
      assert.ok(
        r.requests < c.sent,
        `${r.requests} of ${c.sent} counted: the warm-up's must not be`,
      );
      assert.ok(r.p50Ms <= r.p99Ms);
      assert.equal(r.reqPerSec, r.requests / r.seconds);
      // Tiny answers, 1 to 4 tokens in turn, streamed as asked.
      assert.deepEqual(
        c.bodies.slice(0, 5).map((b) => [b.max_tokens, b.stream]),
        [
          [1, true],
          [2, true],
          [3, true],
          [4, true],
          [1, true],
        ],
      );
    } finally {
      await pool.close();
      await backend.close();
    }
  });

  it("counts answers other than 200 as errors, not latencies", async () => {
    const server = createServer((_req, res) => res.writeHead(503).end("busy"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    try {
      const o = { seconds: 0.02, warmupS: 0, connections: 1, stream: false };
      const r = await runSimHttpMode(pool, o, readCountingClock());
      assert.equal(r.mode, "json");
      assert.equal(r.requests, 0);
      assert.ok(r.errors > 0, "the 503s were not counted");
      assert.ok(Number.isNaN(r.p50Ms), "no latency without an answer");
    } finally {
      await pool.close();
      server.close();
    }
  });
});

describe("bench:sim-http's printing", () => {
  const o = { seconds: 10, warmupS: 2, connections: 64, timeScale: "10000", inProcess: false };
  const r: SimHttpResult = {
    mode: "json",
    requests: 1234,
    errors: 1,
    seconds: 10.04,
    reqPerSec: 122.9,
    p50Ms: 3.125,
    p99Ms: 20,
  };

  it("prints one line per mode with its rate, latencies and the run's settings", () => {
    assert.equal(
      simHttpLine(r, o),
      "json       123 req/s  p50 3.13 ms  p99 20.00 ms  (1234 requests, 1 errors, 10.0 s, 64 connections, time-scale 10000, child process)",
    );
    assert.match(simHttpLine(r, { ...o, inProcess: true }), /, in-process\)$/);
  });

  it("writes the time scale as a number in the JSON", () => {
    const doc = JSON.parse(simHttpJson(o, [r]));
    assert.deepEqual(doc, { connections: 64, timeScale: 10000, results: [r] });
  });
});
