import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { createUpstreamPools, getText } from "../../src/backends/upstream-pools.ts";

test("a backend document over the size limit is refused, not read whole", async () => {
  const server = createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/plain" });
    // Written in pieces, as a backend streaming a huge body would.
    const piece = "x".repeat(64 * 1024);
    for (let i = 0; i < 32; i++) res.write(piece);
    res.end(req.url === "/small" ? "" : piece);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const pools = createUpstreamPools({ backends: [url], connections: 0, timeoutMs: 5000 });
  const upstream = pools.get(url);
  assert.ok(upstream);
  try {
    const signal = new AbortController().signal;
    const whole = await getText(upstream, "/small", signal, 4 * 1024 * 1024);
    assert.equal(whole.text.length, 32 * 64 * 1024);
    await assert.rejects(
      getText(upstream, "/big", signal, 1024 * 1024),
      /larger than 1048576 bytes/,
    );
  } finally {
    await pools.close();
    server.close();
  }
});
