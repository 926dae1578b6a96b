import assert from "node:assert/strict";
import { test } from "node:test";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

const chat = (programId: string, chars: number, stream: boolean) =>
  JSON.stringify({
    model: "m",
    messages: [{ role: "user", content: "x".repeat(chars) }],
    program_id: programId,
    stream,
  });

test("a forced resume due between two scheduler ticks happens at its deadline, not at the next tick", async () => {
  // 100 blocks of 16 = 1600 tokens. A (about 1000 tokens + headroom) streams and is held open;
  // B (about 600 + headroom) does not fit beside it, so it parks until --max-pause.
  const backend = await startFakeBackend({ numGpuBlocks: 100, holdAfter: 1 });
  const router = await startTestRouter({
    backends: backend.url,
    "max-pause": "10",
    "scheduler-interval": "600",
  });
  try {
    const headers = { "content-type": "application/json" };
    const a = await fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers,
      body: chat("a", 5000, true),
    });
    await backend.held();
    const pending = fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      // Streamed from the backend like every request; only A's stream is held.
      headers: { ...headers, "x-fake-no-hold": "1" },
      body: chat("b", 3000, false),
    });
    await router.waitForEvent((e) => e.kind === "request_arrived" && e.programId === "b");
    assert.equal(router.loop.scheduler.snapshot().queueLength, 1);
    router.clock.advance(9_999);
    assert.equal(router.loop.scheduler.snapshot().queueLength, 1, "not before max-pause");
    router.clock.advance(1);
    const res = await pending;
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-maitred-paused-ms"), "10000");
    const snap = router.loop.scheduler.snapshot();
    assert.equal(snap.counters.forcedResumes, 1);
    assert.equal(router.loop.scheduler.program("a")?.markedForPause, true, "A gives way");
    await res.arrayBuffer();
    backend.release();
    await a.arrayBuffer();
  } finally {
    backend.release();
    await router.close();
    await backend.close();
  }
});
