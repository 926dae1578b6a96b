import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import {
  createPrograms,
  liveProgramsOn,
  type MemoryReading,
  metricValue,
  settledMemory,
} from "../../../src/bench/overhead/router-memory.ts";

const PAGE = [
  "# HELP nodejs_heap_size_used_bytes Process heap size used from Node.js in bytes.",
  "nodejs_heap_size_used_bytes 25156632",
  "nodejs_heap_size_used_bytes_other 1",
  'maitred_programs{status="active",state="ACTING"} 4',
  'maitred_programs{status="paused",state="ACTING"} 2',
  'maitred_programs_total{status="active"} 100',
  "",
].join("\n");

describe("reading a router's /metrics", () => {
  it("a sample's value by its exact name", () => {
    assert.equal(metricValue(PAGE, "nodejs_heap_size_used_bytes"), 25_156_632);
  });

  it("a missing sample says which and where", () => {
    assert.throws(
      () => metricValue(PAGE, "nodejs_heap_size_total_bytes", "http://r/metrics"),
      /^Error: nodejs_heap_size_total_bytes not on http:\/\/r\/metrics$/,
    );
  });

  it("live programs: every series of maitred_programs summed, nothing else", () => {
    assert.equal(liveProgramsOn(PAGE), 6);
    assert.equal(liveProgramsOn(""), 0);
  });
});

describe("a settled router", () => {
  it("is the median RSS and the smallest heap over its reads, a wait before each", async () => {
    const reads: MemoryReading[] = [
      { rssBytes: 300, heapUsedBytes: 50 },
      { rssBytes: 100, heapUsedBytes: 40 },
      { rssBytes: 900, heapUsedBytes: 45 },
    ];
    let waits = 0;
    const probe = {
      wait: async () => {
        waits++;
      },
      read: async () => reads.shift() ?? assert.fail("read more than asked"),
    };
    assert.deepEqual(await settledMemory(probe, 3), { rssBytes: 300, heapUsedBytes: 40 });
    assert.equal(waits, 3);
  });
});

describe("making live programs", () => {
  it("one request per program, named by its own id, at most `concurrency` at a time", async () => {
    const seen: (string | undefined)[] = [];
    let inFlight = 0;
    let most = 0;
    const server = createServer((req, res) => {
      inFlight++;
      most = Math.max(most, inFlight);
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c;
      });
      req.on("end", () => {
        const asked = JSON.parse(body) as { model: string; max_tokens: number };
        assert.deepEqual([asked.model, asked.max_tokens], ["m", 1]);
        const id = req.headers["x-program-id"] as string | undefined;
        seen.push(id);
        setImmediate(() => {
          inFlight--;
          // Program 7 fails: it is counted, not thrown.
          res.writeHead(id === "mem-7" ? 500 : 200).end("{}");
        });
      });
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const failed = await createPrograms({ url, model: "m", from: 5, to: 11, concurrency: 2 });
      assert.equal(failed, 1);
      assert.deepEqual(seen.toSorted(), ["mem-10", "mem-5", "mem-6", "mem-7", "mem-8", "mem-9"]);
      assert.ok(most <= 2, `${most} requests at once, want at most 2`);
      seen.length = 0;
      assert.equal(
        await createPrograms({ url, model: "m", from: 0, to: 3, concurrency: 4, named: false }),
        0,
      );
      assert.deepEqual(seen, [undefined, undefined, undefined], "no program id");
    } finally {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });
});
