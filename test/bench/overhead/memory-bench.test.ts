import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { measureMemory, memoryTable } from "../../../src/bench/overhead/memory-bench.ts";

describe("bench:memory's measure", () => {
  it("a base row after the warm-up, then per level what each live program added", async () => {
    // A router stand-in: it keeps every program named in a request, and its memory grows by
    // 3 KiB of RSS and 1 KiB of heap per live program, over a base the warm-up leaves.
    const live = new Set<string>();
    let unnamed = 0;
    const server = createServer((req, res) => {
      if (req.url === "/metrics") {
        res.end(`maitred_programs{status="active",state="ACTING"} ${live.size}\n`);
        return;
      }
      req.resume();
      req.on("end", () => {
        const id = req.headers["x-program-id"] as string | undefined;
        if (id === undefined) unnamed++;
        else live.add(id);
        res.writeHead(200).end("{}");
      });
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const probe = {
      wait: async () => {},
      read: async () => ({
        rssBytes: 100_000 + unnamed * 10 + live.size * 3072,
        heapUsedBytes: 50_000 + live.size * 1024,
      }),
    };
    try {
      const { warmupFailed, rows } = await measureMemory(
        { url, model: "m", probe },
        { levels: [2, 5], concurrency: 2, settleReads: 1, warmup: 3 },
      );
      assert.equal(warmupFailed, 0);
      assert.equal(unnamed, 3, "the warm-up's requests carry no program id");
      assert.deepEqual(
        rows.map((r) => [r.live, r.failed, r.rssPerProgramBytes, r.heapPerProgramBytes]),
        [
          [0, 0, null, null],
          [2, 0, 3072, 1024],
          [5, 0, 3072, 1024],
        ],
      );
      assert.deepEqual(rows[0], {
        live: 0,
        failed: 0,
        rssBytes: 100_030,
        heapUsedBytes: 50_000,
        rssPerProgramBytes: null,
        heapPerProgramBytes: null,
      });
    } finally {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });
});

describe("bench:memory's table", () => {
  it("MiB for the router, KiB per live program, a dash on the base row", () => {
    const table = memoryTable([
      {
        live: 0,
        failed: 0,
        rssBytes: 120 * 2 ** 20,
        heapUsedBytes: 24 * 2 ** 20,
        rssPerProgramBytes: null,
        heapPerProgramBytes: null,
      },
      {
        live: 10_000,
        failed: 3,
        rssBytes: 150 * 2 ** 20,
        heapUsedBytes: 30.25 * 2 ** 20,
        rssPerProgramBytes: 3 * 1024,
        heapPerProgramBytes: 640,
      },
    ]);
    assert.deepEqual(table.split("\n").slice(2), [
      "| 0 | 0 | 120.0 | 24.0 | - | - |",
      "| 10,000 | 3 | 150.0 | 30.3 | 3.0 | 0.6 |",
    ]);
    assert.match(table, /^\| live programs \| failed \| router RSS \(MiB\) \|/);
  });
});
