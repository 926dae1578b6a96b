import assert from "node:assert/strict";
import { test } from "node:test";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

/**
 * What an agent API request carries besides its body reaches the backend as it came: Claude
 * Code's query string and its Anthropic headers; and a backend's own answer to it (here a
 * 404, as from a backend without the route) reaches the client with its status.
 */
test("a Messages request's query string and Anthropic headers reach the backend, and its 404 the client", async () => {
  const backend = await startFakeBackend({ models: ["m"] });
  const router = await startTestRouter({ backends: backend.url });
  try {
    const res = await fetch(`${router.url}/v1/messages?beta=true`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "anthropic-version": "2023-06-01",
        "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
        "x-api-key": "sk-ant-x",
        "x-claude-code-session-id": "cc-pass",
      },
      body: JSON.stringify({ model: "m", max_tokens: 4, messages: [], stream: true }),
    });
    assert.equal(res.status, 404, "the backend's status");
    await res.arrayBuffer();
    const seen = backend.received.find((r) => r.path.startsWith("/v1/messages"));
    assert.ok(seen, `paths seen: ${backend.received.map((r) => r.path)}`);
    assert.equal(seen.path, "/v1/messages?beta=true");
    assert.equal(seen.headers["anthropic-version"], "2023-06-01");
    assert.equal(
      seen.headers["anthropic-beta"],
      "claude-code-20250219,interleaved-thinking-2025-05-14",
    );
    assert.equal(seen.headers["x-api-key"], "sk-ant-x");
    assert.equal(seen.headers["x-claude-code-session-id"], "cc-pass");
  } finally {
    await router.close();
    await backend.close();
  }
});
