import assert from "node:assert/strict";
import { test } from "node:test";
import { forwardRequestHeaders, relayResponseHeaders } from "../../src/proxy/headers.ts";

test("request headers: hop-by-hop, Connection-listed and maitred's own stay; Authorization goes", () => {
  const out = forwardRequestHeaders(
    {
      host: "router:8300",
      connection: "keep-alive, x-secret-hop",
      "x-secret-hop": "1",
      "keep-alive": "timeout=5",
      "transfer-encoding": "chunked",
      "content-length": "999",
      authorization: "Bearer sk-1",
      "x-maitred-max-wait-ms": "100",
      "x-program-id": "p",
      "x-request-id": "abc",
      "content-type": "application/json",
      "accept-encoding": "gzip, br",
    },
    42,
  );
  assert.deepEqual(out, {
    authorization: "Bearer sk-1",
    "x-request-id": "abc",
    "content-type": "application/json",
    "content-length": "42",
    // maitred reads the answer, so it asks for it uncompressed.
    "accept-encoding": "identity",
  });
});

test("response headers pass through minus hop-by-hop ones; Content-Length only when the body is unchanged", () => {
  const upstream = {
    "content-type": "text/event-stream",
    "content-length": "10",
    "transfer-encoding": "chunked",
    "x-request-id": "r",
    "x-upstream": "u",
    connection: "close",
  };
  // x-request-id is maitred's own (request-id.ts): the backend's never replaces it.
  assert.deepEqual(relayResponseHeaders(upstream, true), {
    "content-type": "text/event-stream",
    "x-upstream": "u",
  });
  assert.equal(relayResponseHeaders(upstream, false)["content-length"], "10");
});
