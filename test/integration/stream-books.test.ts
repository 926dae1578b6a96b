import assert from "node:assert/strict";
import { test } from "node:test";
import type { SchedulerEvent } from "../../src/core/events.ts";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

test("a streamed turn feeds the core first token, progress every N tokens, usage, then one finish", async () => {
  const backend = await startFakeBackend({ tokens: 9, promptTokens: 30 });
  const router = await startTestRouter({ backends: backend.url, "progress-interval-tokens": "4" });
  try {
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "m",
        stream: true,
        messages: [{ role: "user", content: "go" }],
        program_id: "books",
      }),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.doesNotMatch(
      text,
      /"usage"/,
      "the usage event maitred asked for is not shown to the client",
    );
    await router.waitForEvent((e) => e.kind === "request_finished");
    const mine = router.events.filter((e) => "requestId" in e) as Array<
      SchedulerEvent & { requestId: string }
    >;
    const kinds = mine.map((e) => e.kind);
    assert.equal(kinds.filter((k) => k === "request_first_token").length, 1);
    const progress = mine.filter((e) => e.kind === "request_progress") as Array<{
      completionTokens: number;
    }>;
    assert.ok(progress.length >= 1, "10 content events with an interval of 4 give progress");
    for (let i = 1; i < progress.length; i++)
      assert.ok(progress[i].completionTokens > progress[i - 1].completionTokens);
    const usage = mine.find((e) => e.kind === "request_usage");
    assert.ok(usage && usage.kind === "request_usage");
    assert.equal(usage.usage.totalTokens, 39);
    assert.deepEqual(kinds.at(-1), "request_finished");
    assert.equal(
      kinds.indexOf("request_usage"),
      kinds.length - 2,
      "usage arrives before the finish",
    );
    assert.ok(kinds.indexOf("request_first_token") < kinds.indexOf("request_progress"));
  } finally {
    await router.close();
    await backend.close();
  }
});
