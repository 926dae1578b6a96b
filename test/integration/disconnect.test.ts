import assert from "node:assert/strict";
import { request } from "node:http";
import { test } from "node:test";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

/** POST a body and hand back the live response; `abort()` drops the connection. */
function openStream(url: string, body: unknown, headers: Record<string, string> = {}) {
  const req = request(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
  });
  req.on("error", () => {}); // the abort is the point
  const response = new Promise<import("node:http").IncomingMessage>((resolve) =>
    req.on("response", resolve),
  );
  req.end(JSON.stringify(body));
  return { response, abort: () => req.destroy() };
}

test("a client that disconnects mid-stream ends the step once, and the upstream stream is aborted", async () => {
  const backend = await startFakeBackend({ tokens: 10, holdAfter: 2 });
  const router = await startTestRouter({ backends: backend.url });
  try {
    const s = openStream(router.url, {
      model: "m",
      stream: true,
      messages: [{ role: "user", content: "long answer" }],
      program_id: "agent-dc",
    });
    const res = await s.response;
    assert.equal(res.statusCode, 200);
    await backend.held();
    const view = (await (await fetch(`${router.url}/programs/agent-dc`)).json()) as {
      status: string;
      in_flight: number;
    };
    assert.equal(view.status, "reasoning", "mid-stream the program is on the GPU");
    s.abort();
    const finished = await router.waitForEvent((e) => e.kind === "request_finished");
    assert.equal(finished.kind === "request_finished" && finished.outcome, "client_closed");
    await backend.streamClosed();
    const after = (await (await fetch(`${router.url}/programs/agent-dc`)).json()) as {
      status: string;
      in_flight: number;
    };
    assert.equal(after.status, "acting", "the step is finalised: not stuck REASONING");
    assert.equal(after.in_flight, 0);
    assert.equal(
      router.events.filter((e) => e.kind === "request_finished").length,
      1,
      "exactly one request_finished",
    );
  } finally {
    backend.release();
    await router.close();
    await backend.close();
  }
});

test("a client that leaves while its request is parked is finished as client_closed", async () => {
  // Capacity unknown: no backend is placeable, so a new program's first request parks.
  const backend = await startFakeBackend({ numGpuBlocks: 0 });
  const router = await startTestRouter({ backends: backend.url });
  try {
    const s = openStream(router.url, {
      model: "m",
      messages: [{ role: "user", content: "wait" }],
      program_id: "agent-parked",
    });
    await router.waitForEvent((e) => e.kind === "request_arrived");
    assert.equal(router.loop.scheduler.snapshot().queueLength, 1, "the request is parked");
    s.abort();
    const finished = await router.waitForEvent((e) => e.kind === "request_finished");
    assert.equal(finished.kind === "request_finished" && finished.outcome, "client_closed");
    assert.equal(router.loop.scheduler.snapshot().queueLength, 0, "nothing left parked");
    assert.equal(
      backend.received.filter((r) => r.path.startsWith("/v1/")).length,
      0,
      "never forwarded",
    );
  } finally {
    await router.close();
    await backend.close();
  }
});
