import assert from "node:assert/strict";
import { test } from "node:test";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

test("a forced resume due between two scheduler ticks happens at its deadline, not at the next tick", async () => {
  // Capacity unknown: the program cannot be placed, so its request parks until --max-pause.
  const backend = await startFakeBackend({ numGpuBlocks: 0 });
  const router = await startTestRouter({
    backends: backend.url,
    "max-pause": "10",
    "scheduler-interval": "600",
  });
  try {
    const pending = fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "m",
        messages: [{ role: "user", content: "hi" }],
        program_id: "forced",
      }),
    });
    await router.waitForEvent((e) => e.kind === "request_arrived");
    assert.equal(router.loop.scheduler.snapshot().queueLength, 1);
    router.clock.advance(9_999);
    assert.equal(router.loop.scheduler.snapshot().queueLength, 1, "not before max-pause");
    router.clock.advance(1);
    const res = await pending;
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-maitred-paused-ms"), "10000");
    assert.equal(router.loop.scheduler.snapshot().counters.forcedResumes, 1);
    await res.arrayBuffer();
  } finally {
    await router.close();
    await backend.close();
  }
});
