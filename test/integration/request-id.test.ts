import assert from "node:assert/strict";
import { test } from "node:test";
import { createLogger } from "../../src/util/logger.ts";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

test("x-request-id: the client's is kept, or one is made; the answer returns it, the backend gets it, and the request's log lines carry it", async () => {
  const backend = await startFakeBackend();
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: "info", write: (l) => lines.push(JSON.parse(l)) });
  const router = await startTestRouter({ backends: backend.url }, { logger });
  const chat = (headers: Record<string, string>) =>
    fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
    });
  const sentId = () => backend.received.at(-1)?.headers["x-request-id"];
  try {
    const kept = await chat({ "x-request-id": "trace-abc-123" });
    await kept.text();
    assert.equal(kept.headers.get("x-request-id"), "trace-abc-123");
    assert.equal(sentId(), "trace-abc-123");

    const made = await chat({});
    await made.text();
    const id = made.headers.get("x-request-id") ?? "";
    assert.match(id, UUID);
    assert.equal(sentId(), id);

    // An id that is not one (too long) is replaced, not echoed.
    const long = await chat({ "x-request-id": "x".repeat(300) });
    await long.text();
    assert.match(long.headers.get("x-request-id") ?? "", UUID);

    // Errors and admin answers carry it too, and a failed request's log line names it.
    const bad = await chat({ "x-request-id": "bad-1", "x-fake-status": "500" });
    await bad.text();
    assert.equal(bad.headers.get("x-request-id"), "bad-1");
    const health = await fetch(`${router.url}/health`, { headers: { "x-request-id": "h-1" } });
    await health.text();
    assert.equal(health.headers.get("x-request-id"), "h-1");
    await backend.close();
    const gone = await chat({ "x-request-id": "gone-1" });
    assert.equal(gone.status, 502);
    assert.equal(gone.headers.get("x-request-id"), "gone-1");
    assert.ok(
      lines.some((l) => l.msg === "backend request failed" && l.requestId === "gone-1"),
      JSON.stringify(lines),
    );
  } finally {
    await router.close();
    await backend.close().catch(() => {});
  }
});

test("a backend's own x-request-id never replaces the one maitred returns", async () => {
  const backend = await startFakeBackend({ responseHeaders: { "x-request-id": "upstream-own" } });
  const router = await startTestRouter({ backends: backend.url });
  try {
    for (const stream of [false, true]) {
      const res = await fetch(`${router.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": "mine-1" },
        body: JSON.stringify({ model: "m", stream, messages: [{ role: "user", content: "x" }] }),
      });
      await res.text();
      assert.equal(res.headers.get("x-request-id"), "mine-1", `stream ${stream}`);
    }
  } finally {
    await router.close();
    await backend.close();
  }
});
