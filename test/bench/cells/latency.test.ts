import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { after, describe, it } from "node:test";
import type { HapRequest } from "../../../src/bench/cells/haproxy-log.ts";
import { latencyBody, measureLatency } from "../../../src/bench/cells/latency.ts";

describe("latency", () => {
  const servers: Server[] = [];
  after(() => {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
  });

  async function body(req: IncomingMessage): Promise<string> {
    let text = "";
    for await (const chunk of req) text += chunk;
    return text;
  }

  /** An in-process server on loopback; `handle` gives each request's body its status. */
  async function serve(handle: (body: string) => number): Promise<string> {
    const s = createServer(async (req, res) => {
      res.statusCode = handle(await body(req));
      res.end("{}");
    });
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    return `http://127.0.0.1:${(s.address() as { port: number }).port}`;
  }

  /**
   * Stands in for HAProxy: logs each request's program on the cell `cellOf` gives it, before it
   * answers (so the log line is there when the caller looks), and answers with `status`.
   */
  async function fakeHaproxy(cellOf: (id: string) => string, status = 200) {
    const requests: HapRequest[] = [];
    const sizes: number[] = [];
    const url = await serve((text) => {
      const id = JSON.parse(text).program_id as string;
      sizes.push(text.length);
      requests.push({ program: id, server: cellOf(id) } as HapRequest);
      return status;
    });
    return { url, requests, sizes };
  }

  describe("measureLatency", () => {
    it("finds an id the hash gives the cell, then times each size both ways, one at a time", async () => {
      const directUrl = await serve(() => 200);
      const hap = await fakeHaproxy((id) => (id === "latency-2" ? "cell-a" : "cell-c"));
      let cpu = 1;
      const logged: string[] = [];
      const m = await measureLatency({
        directUrl,
        viaUrl: hap.url,
        cell: "cell-a",
        model: "m",
        requests: hap.requests,
        smallRequests: 3,
        largeRequests: 1,
        cpuSeconds: () => (cpu += 0.003),
        log: (msg) => logged.push(msg),
      });
      assert.equal(m.id, "latency-2");
      assert.deepEqual([m.small.direct.length, m.small.haproxy.length, m.small.failed], [3, 3, 0]);
      assert.deepEqual([m.large.direct.length, m.large.haproxy.length], [1, 1]);
      // Three probes, then the warm-up pairs and the measured ones through HAProxy.
      assert.equal(hap.requests.length, 3 + (3 + 3) + (1 + 1));
      assert.ok(m.largeBytes > 200 * 1024, `got ${m.largeBytes}`);
      assert.equal(m.smallBytes, latencyBody("m", "latency-2", "Say one word.").length);
      assert.ok(m.smallWindow.from <= m.smallWindow.to && m.smallWindow.to <= m.largeWindow.from);
      // HAProxy's CPU read once before and once after each kind's measured requests.
      assert.ok(Math.abs(m.small.cpuMsPerRequest - 1) < 1e-9, `got ${m.small.cpuMsPerRequest}`);
      assert.deepEqual(logged, ["latency: 3 small and 1 large requests each way"]);
    });

    it("counts the answers with another status than 200", async () => {
      const directUrl = await serve(() => 200);
      const hap = await fakeHaproxy(() => "cell-a", 503);
      const m = await measureLatency({
        directUrl,
        viaUrl: hap.url,
        cell: "cell-a",
        model: "m",
        requests: hap.requests,
        smallRequests: 2,
        largeRequests: 0,
        cpuSeconds: () => 0,
        log: () => {},
      });
      assert.equal(m.id, "latency-0");
      assert.equal(m.small.failed, 2, "the two measured through HAProxy");
      assert.deepEqual(m.large.direct, []);
    });

    it("fails when none of the ids tried is given to the cell", async () => {
      const directUrl = await serve(() => 200);
      const hap = await fakeHaproxy(() => "cell-b");
      await assert.rejects(
        measureLatency({
          directUrl,
          viaUrl: hap.url,
          cell: "cell-a",
          model: "m",
          requests: hap.requests,
          smallRequests: 1,
          largeRequests: 1,
          cpuSeconds: () => 0,
          log: () => {},
        }),
        /no latency-N program id hashed to cell-a/,
      );
      assert.equal(hap.requests.length, 50);
    });
  });

  describe("latencyBody", () => {
    it("asks one token of a plain answer, naming the program", () => {
      assert.deepEqual(JSON.parse(latencyBody("m", "latency-1", "hi")), {
        model: "m",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 1,
        stream: false,
        program_id: "latency-1",
      });
    });
  });
});
