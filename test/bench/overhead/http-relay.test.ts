import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { type FastUpstream, startFastUpstream } from "../../../src/bench/overhead/fast-upstream.ts";
import { isHttpUrl, listenHttpRelay } from "../../../src/bench/overhead/http-relay.ts";
import type { Relay } from "../../../src/bench/overhead/tcp-relay.ts";

describe("the bare HTTP relay's argument", () => {
  it("is an http or https URL", () => {
    assert.ok(isHttpUrl("http://127.0.0.1:8000"));
    assert.ok(isHttpUrl("https://gpu1"));
    for (const bad of ["ftp://x", "127.0.0.1:8000", "", "http//x"]) assert.ok(!isHttpUrl(bad), bad);
  });
});

describe("the bare HTTP relay", () => {
  let upstream: FastUpstream;
  let relay: Relay;
  before(async () => {
    upstream = await startFastUpstream(40);
    relay = await listenHttpRelay(upstream.url);
  });
  after(async () => {
    await relay.close();
    await upstream.close();
  });

  const ask = (url: string, body: object) =>
    fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-program-id": "p" },
      body: JSON.stringify(body),
    });

  it("forwards a plain answer whole, with its length", async () => {
    const body = { model: "m", max_tokens: 3, stream: false };
    const direct = await ask(upstream.url, body);
    const via = await ask(relay.url, body);
    assert.equal(via.status, 200);
    assert.equal(via.headers.get("content-length"), direct.headers.get("content-length"));
    assert.equal(await via.text(), await direct.text());
  });

  it("relays a stream chunked, every event the upstream wrote", async () => {
    const body = { model: "m", max_tokens: 40, stream: true };
    const s0 = upstream.stats();
    const via = await ask(relay.url, body);
    assert.equal(via.headers.get("content-length"), null);
    assert.equal(via.headers.get("transfer-encoding"), "chunked");
    const text = await via.text();
    assert.equal(upstream.stats().events - s0.events, 40 + 2);
    assert.equal(text, await (await ask(upstream.url, body)).text());
  });

  it("forwards the request as it came: method, path, body and the client's headers", async () => {
    let seen: { method?: string; url?: string; program?: string; host?: string; body: string } = {
      body: "",
    };
    const echo: Server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c;
      });
      req.on("end", () => {
        seen = {
          method: req.method,
          url: req.url,
          program: req.headers["x-program-id"] as string,
          host: req.headers.host,
          body,
        };
        res.end("ok");
      });
    });
    await new Promise<void>((done) => echo.listen(0, "127.0.0.1", done));
    const echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    const other = await listenHttpRelay(echoUrl);
    try {
      const res = await ask(other.url, { model: "m" });
      assert.equal(await res.text(), "ok");
      assert.deepEqual(seen, {
        method: "POST",
        url: "/v1/chat/completions",
        program: "p",
        host: new URL(echoUrl).host, // the relay's own host header is not forwarded
        body: '{"model":"m"}',
      });
    } finally {
      await other.close();
      echo.closeAllConnections();
      await new Promise((done) => echo.close(done));
    }
  });
});
