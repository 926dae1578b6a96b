import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import { type FastUpstream, startFastUpstream } from "../../../src/bench/overhead/fast-upstream.ts";
import { hostPort, listenTcpRelay, type Relay } from "../../../src/bench/overhead/tcp-relay.ts";

describe("the bare TCP relay's argument", () => {
  it("names a host and a port", () => {
    assert.deepEqual(hostPort("127.0.0.1:8000"), { host: "127.0.0.1", port: 8000 });
    assert.deepEqual(hostPort("gpu1:65535"), { host: "gpu1", port: 65_535 });
  });

  it("any host without a colon and any port up to 65535 reads back as given", () => {
    const host = fc.stringMatching(/^[a-z0-9.-]{1,30}$/);
    fc.assert(
      fc.property(host, fc.integer({ min: 0, max: 65_535 }), (h, p) => {
        assert.deepEqual(hostPort(`${h}:${p}`), { host: h, port: p });
      }),
    );
    fc.assert(
      fc.property(host, fc.integer({ min: 65_536, max: 10_000_000 }), (h, p) => {
        assert.equal(hostPort(`${h}:${p}`), null);
      }),
    );
  });

  it("is refused without a host, without a port, or with a port that is not one", () => {
    for (const bad of ["no-port", ":8000", "host:", "host:80a", "host:65536", ""])
      assert.equal(hostPort(bad), null, bad);
  });
});

describe("the bare TCP relay", () => {
  let upstream: FastUpstream;
  let relay: Relay;
  before(async () => {
    upstream = await startFastUpstream(40);
    relay = await listenTcpRelay(hostPort(new URL(upstream.url).host) ?? assert.fail("no host"));
  });
  after(async () => {
    await relay.close();
    await upstream.close();
  });

  const ask = async (url: string, body: object) => {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
  };

  it("passes a plain answer and a stream as the upstream wrote them", async () => {
    for (const body of [
      { model: "m", max_tokens: 3, stream: false },
      { model: "m", max_tokens: 40, stream: true },
    ]) {
      const s0 = upstream.stats();
      const via = await ask(relay.url, body);
      assert.equal(upstream.stats().requests - s0.requests, 1, "the relay reached the upstream");
      assert.deepEqual(via, await ask(upstream.url, body));
    }
  });

  it("on close ends the connections its clients keep alive", async () => {
    const other = await listenTcpRelay(hostPort(new URL(upstream.url).host) ?? assert.fail());
    await ask(other.url, { model: "m", max_tokens: 1 });
    await other.close(); // would wait for the client's keep-alive connection otherwise
    await assert.rejects(ask(other.url, { model: "m", max_tokens: 1 }));
  });
});
