import assert from "node:assert/strict";
import { createServer } from "node:http";
import { describe, it } from "node:test";
import {
  benchConfig,
  clockSkew,
  hapLogReader,
  skewOf,
} from "../../../src/bench/cells/bench-haproxy.ts";
import type { HapRequest } from "../../../src/bench/cells/haproxy-log.ts";
import { createVirtualClock } from "../../../src/runtime/clock.ts";

const REQ =
  "REQ 1700000000.250 cells_by_program cell-b cells-p7 200 0/0/0/0/1/30/35 0 ---- 512 POST /v1/chat/completions";

const health = (path: string, startMs: number) =>
  ({
    startMs,
    sentMs: startMs,
    endMs: startMs + 1,
    server: "cell-a",
    program: null,
    status: 200,
    tR: 0,
    tw: 0,
    tc: 0,
    tr: 1,
    ta: 1,
    retries: 0,
    term: "----",
    method: "GET",
    path,
  }) satisfies HapRequest;

describe("hapLogReader", () => {
  it("keeps requests on the reader's clock and the ring's changes stamped when seen", () => {
    let now = 42;
    const r = hapLogReader(1_000, () => now);
    r.onLine(REQ);
    now = 50;
    r.onLine("Server cells_by_program/cell-b is DOWN, reason: Layer4 connection problem");
    r.onLine("[NOTICE] something else");
    r.onLine("REQ garbled");
    assert.equal(r.requests.length, 1);
    assert.equal(r.requests[0].startMs, 1_700_000_000_250 - 1_000);
    assert.deepEqual(r.events, [{ atMs: 50, server: "cell-b", state: "DOWN" }]);
  });
});

describe("skewOf", () => {
  it("is the median of logged start less sent time, over the probes' paths only", () => {
    const sent = new Map([
      ["/health?bench-clock=x-0", 100],
      ["/health?bench-clock=x-1", 200],
      ["/health?bench-clock=x-2", 300],
    ]);
    const logged = [
      health("/health?bench-clock=x-0", 102),
      health("/health?bench-clock=x-1", 203),
      health("/health?bench-clock=x-2", 309),
      health("/health", 5_000),
    ];
    assert.equal(skewOf(logged, sent), 3);
    assert.equal(skewOf([], sent), 0, "nothing logged: no skew assumed");
  });
});

describe("clockSkew", () => {
  it("sends its probes through the address and reads where the log put them", async () => {
    const clock = createVirtualClock(10_000);
    const requests: HapRequest[] = [];
    // Stands in for HAProxy: logs each request 4 ms later than the driver sent it.
    const server = createServer((req, res) => {
      requests.push(health(req.url ?? "", clock.now() + 4));
      res.end("ok");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      assert.equal(await clockSkew({ url, requests }, "t", clock), 4);
      assert.equal(requests.length, 20);
      assert.equal(requests[0].path, "/health?bench-clock=t-0");
    } finally {
      clock.stop();
      server.closeAllConnections();
      server.close();
    }
  });
});

describe("benchConfig", () => {
  it("is the generated configuration with the request log and the body buffer asked for", () => {
    const cells = [{ name: "cell-a", address: "127.0.0.1:1" }];
    const text = benchConfig(cells, "127.0.0.1:2", "127.0.0.1:3", 65_536);
    assert.match(text, /log-format "REQ /);
    assert.match(text, /bind 127\.0\.0\.1:2/);
    assert.match(text, /tune\.bufsize 65536/);
  });
});
