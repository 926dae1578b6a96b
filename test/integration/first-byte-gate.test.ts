import assert from "node:assert/strict";
import { test } from "node:test";
import type { CoreScheduler } from "../../src/core/api.ts";
import { createScheduler } from "../../src/core/scheduler.ts";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

/**
 * The first-byte gate of the proxy (a request that has started answering is never preempted): with priorities on, nothing is
 * written to a client before the core commits the request's first byte. Here the core refuses
 * every commit (as it does for a request it has just chosen as a preemption victim), so
 * whatever the backend answers, the client must get the 503 envelope and none of its bytes.
 */

async function routerRefusingCommits(backendUrl: string) {
  const asked: string[] = [];
  const router = await startTestRouter(
    { backends: backendUrl, priority: true },
    {
      createScheduler: (options) => {
        const core = createScheduler(options);
        const refusing: CoreScheduler = {
          ...core,
          prioritiesEnabled: core.prioritiesEnabled,
          tryCommitFirstByte(id) {
            asked.push(id);
            return false;
          },
        };
        return refusing;
      },
    },
  );
  return { router, asked };
}

for (const stream of [true, false]) {
  test(`a refused commit answers 503 preempted and writes none of the backend's bytes (stream: ${stream})`, async () => {
    const backend = await startFakeBackend({ tokens: 3 });
    const { router, asked } = await routerRefusingCommits(backend.url);
    try {
      const res = await fetch(`${router.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-priority": "bulk" },
        body: JSON.stringify({ model: "m", messages: [], stream, program_id: "victim" }),
      });
      assert.equal(res.status, 503);
      assert.equal(res.headers.get("x-maitred-preempted"), "true");
      assert.equal(res.headers.get("retry-after"), "1");
      assert.equal(res.headers.get("x-upstream"), null, "the backend's head was never relayed");
      const text = await res.text();
      assert.doesNotMatch(text, /data:|t1/, "no backend byte reached the client");
      assert.equal(JSON.parse(text).error.type, "ServiceUnavailableError");
      assert.equal(asked.length, 1, "the commit was asked once, before the first write");
      const finished = await router.waitForEvent((e) => e.kind === "request_finished");
      assert.equal(finished.kind === "request_finished" && finished.outcome, "cancelled");
    } finally {
      await router.close();
      await backend.close();
    }
  });
}

test("with priorities off the commit is never asked and the stream head goes out at once", async () => {
  const backend = await startFakeBackend({ tokens: 3 });
  const asked: string[] = [];
  const router = await startTestRouter(
    { backends: backend.url },
    {
      createScheduler: (options) => {
        const core = createScheduler(options);
        return {
          ...core,
          tryCommitFirstByte(id: string) {
            asked.push(id);
            return false;
          },
        };
      },
    },
  );
  try {
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-fake-hold-first": "1" },
      body: JSON.stringify({ model: "m", messages: [], stream: true, program_id: "p" }),
    });
    assert.equal(res.status, 200, "the head arrives while the backend has sent no chunk yet");
    backend.release();
    assert.match(await res.text(), /t3/);
    assert.deepEqual(asked, [], "the off path never touches the gate");
  } finally {
    backend.release();
    await router.close();
    await backend.close();
  }
});
