import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { type FastUpstream, startFastUpstream } from "../../../src/bench/overhead/fast-upstream.ts";
import {
  agentMessages,
  bodyRequests,
  largeBody,
  runLoad,
  SSE_CHUNKS,
  smallBody,
} from "../../../src/bench/overhead/proxy-load.ts";

describe("bench:proxy's bodies", () => {
  it("a small request names its program in maitred's field; a stream asks for the SSE phase's length", () => {
    assert.deepEqual(JSON.parse(smallBody("agent-3", false)), {
      model: "m",
      messages: [{ role: "user", content: "Summarise the tool output in one line." }],
      max_tokens: 8,
      stream: false,
      program_id: "agent-3",
    });
    assert.equal(JSON.parse(smallBody("s", true)).max_tokens, SSE_CHUNKS);
  });

  it("the large body: about 380 KiB of conversation, kept as maitred forwards it or one it must change", () => {
    const messages = agentMessages();
    const kept = JSON.parse(largeBody("kept", messages));
    const changed = JSON.parse(largeBody("changed", messages));
    const kib = Buffer.byteLength(largeBody("kept", messages)) / 1024;
    assert.ok(kib > 360 && kib < 400, `${kib} KiB`);
    assert.equal(messages.length, 1 + 2 * 57);
    assert.deepEqual(kept.stream_options, { include_usage: true });
    assert.equal(kept.program_id, undefined, "its program id goes in a header");
    assert.equal(changed.program_id, "agent-large");
    assert.equal(changed.stream_options, undefined, "maitred must ask for the usage itself");
    assert.deepEqual(kept.messages, changed.messages);
  });

  it("the body phase sends a tenth of the latency phase's requests, at least 50", () => {
    assert.equal(bodyRequests(5000), 500);
    assert.equal(bodyRequests(20), 50);
  });
});

describe("bench:proxy's load", () => {
  let upstream: FastUpstream;
  before(async () => {
    upstream = await startFastUpstream(SSE_CHUNKS);
  });
  after(() => upstream.close());
  const cmd = { url: "", requests: 3, seconds: 0.01, connections: 2 };

  it("latency: the requests one after the other, their percentiles and body size", async () => {
    const s0 = upstream.stats();
    const r = await runLoad({ ...cmd, kind: "latency", url: upstream.url });
    assert.equal(r.n, 3);
    assert.equal(upstream.stats().requests - s0.requests, 3);
    assert.equal(r.bytes, Buffer.byteLength(smallBody("latency-0", false)));
    assert.ok(r.p50_ms > 0 && r.p50_ms <= r.p99_ms);
  });

  it("throughput: every request the upstream answered, over the phase's seconds", async () => {
    const s0 = upstream.stats();
    const r = await runLoad({ ...cmd, kind: "throughput", url: upstream.url });
    assert.ok(r.n >= 2, "each connection sends one at least");
    assert.equal(upstream.stats().requests - s0.requests, r.n);
    assert.equal(r.rps, r.n / 0.01);
  });

  it("sse: whole streams read, chunks and bytes over the same time", async () => {
    const one = await (
      await fetch(`${upstream.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: smallBody("s", true),
      })
    ).arrayBuffer();
    const r = await runLoad({ ...cmd, kind: "sse", url: upstream.url });
    // Every stream is read whole: bytes per chunk are one stream's over its chunks.
    assert.ok(Math.abs((r.mb_per_s * 1e6) / r.chunks_per_s - one.byteLength / SSE_CHUNKS) < 1e-6);
  });

  it("an answer that is not 200 fails the load", async () => {
    const refusing = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(503).end("busy"));
    });
    await new Promise<void>((done) => refusing.listen(0, "127.0.0.1", done));
    try {
      const url = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
      await assert.rejects(runLoad({ ...cmd, kind: "latency", url }), /^Error: status 503$/);
    } finally {
      refusing.closeAllConnections();
      await new Promise((done) => refusing.close(done));
    }
  });
});
