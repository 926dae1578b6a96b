import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { backendHealthy } from "../../../src/bench/scenarios/backend-kill.ts";

describe("watching the killed backend", () => {
  it("reads its health from the router's /backends; null when absent or unreadable", async () => {
    const server = createServer((req, res) => {
      if (req.url !== "/backends") return res.writeHead(404).end();
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ "http://a": { healthy: true }, "http://b": { healthy: false } }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      assert.equal(await backendHealthy(url, "http://a"), true);
      assert.equal(await backendHealthy(url, "http://b"), false);
      assert.equal(await backendHealthy(url, "http://c"), null);
    } finally {
      await new Promise((r) => server.close(r));
    }
    assert.equal(await backendHealthy(url, "http://a"), null, "a router gone is no answer");
  });
});
