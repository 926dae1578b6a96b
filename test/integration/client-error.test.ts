import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, test } from "node:test";
import { type FakeBackend, startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

describe("client-error", () => {
  let backend: FakeBackend;
  let router: TestRouter;
  before(async () => {
    backend = await startFakeBackend();
    router = await startTestRouter({ backends: backend.url });
  });
  after(async () => {
    await router.close();
    await backend.close();
  });

  /** Sends raw bytes and reads the whole answer until the router closes the connection. */
  function raw(request: string): Promise<{ status: number; head: string; body: string }> {
    const { port, hostname } = new URL(router.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(request));
      let text = "";
      socket.on("data", (d) => {
        text += d.toString("utf8");
      });
      socket.on("error", reject);
      socket.on("close", () => {
        const [head, body = ""] = text.split("\r\n\r\n");
        resolve({ status: Number(head.split(" ")[1]), head, body });
      });
    });
  }

  function envelope(body: string): { error: { type: string; code: unknown; message: string } } {
    const doc = JSON.parse(body);
    assert.deepEqual(Object.keys(doc.error).sort(), ["code", "message", "param", "type"]);
    return doc;
  }

  test("requests Node's parser refuses get the envelope, and the connection is closed", async () => {
    const bad = await raw("GET /health HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n");
    assert.equal(bad.status, 400);
    assert.match(bad.head, /connection: close/i);
    assert.equal(envelope(bad.body).error.code, "malformed_request");

    const big = await raw(
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(40_000)}\r\n\r\n`,
    );
    assert.equal(big.status, 431);
    assert.equal(envelope(big.body).error.code, "headers_too_large");

    const expect = await raw(
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nExpect: wonders\r\nContent-Length: 2\r\n\r\n{}",
    );
    assert.equal(expect.status, 417);
    assert.equal(envelope(expect.body).error.code, "expectation_failed");

    // On the Anthropic Messages route, in that API's envelope.
    const messages = await raw(
      "POST /v1/messages?beta=true HTTP/1.1\r\nHost: x\r\nExpect: wonders\r\nContent-Length: 2\r\n\r\n{}",
    );
    assert.equal(messages.status, 417);
    const doc = JSON.parse(messages.body);
    assert.equal(doc.type, "error");
    assert.equal(doc.error.type, "invalid_request_error");

    const ok = await fetch(`${router.url}/health`);
    assert.equal(ok.status, 200, "the router keeps serving");
  });

  test("an HTTP/1.0 request without a Host header, as health checkers send, is served", async () => {
    const res = await raw("GET /health HTTP/1.0\r\n\r\n");
    assert.equal(res.status, 200, res.head);
    assert.equal((JSON.parse(res.body) as { status: string }).status, "ok");
  });
});
