import assert from "node:assert/strict";
import { type IncomingMessage, request } from "node:http";
import { test } from "node:test";
import { parsePrometheusText } from "../../src/backends/prometheus-text.ts";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

/**
 * The first-byte gate of the proxy, with the real core behind it: with priorities on, nothing
 * is written to a client (not even a stream's head) until the core commits the request's
 * first byte, and a committed request is never a preemption victim. So a request preempted
 * while its backend has answered nothing yet gets a clean 503 envelope and none of the
 * backend's bytes, streamed or not; one that has started answering runs to its end while the
 * request that wanted its room waits. Time is the router's manual clock; the tests wait on
 * router events and backend hold points, never on elapsed time.
 */

// 100 blocks × 16 = 1600 tokens. The bulk prompt (5000 chars ≈ 1000 tokens at 5 chars per
// token, + 100 headroom) fits alone; the system prompt (≈ 600 + 100) then finds 500 tokens, too
// little, so it can only run in the bulk program's room.
const CAPACITY_BLOCKS = 100;
const TENANTS = `priority:
  tenants:
    ops: { max_class: system, api_keys: [sk-ops] }
`;
const prompt = (chars: number) => [{ role: "user", content: "x".repeat(chars) }];
const SYSTEM_HEADERS = { "x-priority": "system", authorization: "Bearer sk-ops" };

/** POST a chat request and hand back the live response. */
function open(url: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const req = request(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
  });
  req.on("error", () => {});
  const response = new Promise<IncomingMessage>((resolve) => req.on("response", resolve));
  req.end(JSON.stringify({ model: "m", ...body }));
  return response;
}

async function bodyOf(res: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of res) text += chunk;
  return text;
}

for (const stream of [true, false]) {
  test(`a request preempted before its first byte gets a clean 503 and none of the backend's bytes (stream: ${stream})`, async () => {
    const backend = await startFakeBackend({ numGpuBlocks: CAPACITY_BLOCKS, tokens: 3 });
    const router = await startTestRouter({ backends: backend.url }, { yaml: TENANTS });
    try {
      const bulk = open(
        router.url,
        { program_id: "victim", stream, messages: prompt(5000) },
        { "x-priority": "bulk", "x-fake-hold-first": "1" },
      );
      await backend.held(); // the backend sent its head and nothing else
      const sys = await fetch(`${router.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", ...SYSTEM_HEADERS },
        body: JSON.stringify({ model: "m", messages: prompt(3000), program_id: "control" }),
      });
      assert.equal(sys.status, 200, "the system request took the bulk program's room");
      assert.equal(sys.headers.get("x-maitred-class"), "system");
      await sys.text();

      const res = await bulk;
      assert.equal(res.statusCode, 503);
      assert.equal(res.headers["x-maitred-preempted"], "true");
      assert.equal(res.headers["retry-after"], "1");
      assert.equal(res.headers["x-maitred-class"], "bulk");
      assert.equal(res.headers["x-upstream"], undefined, "the backend's head was never relayed");
      assert.match(String(res.headers["content-type"]), /application\/json/);
      const text = await bodyOf(res);
      assert.doesNotMatch(text, /data:|t1|x{3}/, "no backend byte reached the client");
      assert.equal(JSON.parse(text).error.type, "ServiceUnavailableError");
      assert.match(JSON.parse(text).error.message, /preempted/);
      const finished = await router.waitForEvent(
        (e) => e.kind === "request_finished" && e.outcome === "cancelled",
      );
      assert.ok(finished);
      const pr = router.loop.scheduler.snapshot().priority;
      assert.equal(pr?.classes.bulk.preemptions, 1);
      assert.equal(pr?.classes.bulk.admissions.preempted, 1);
      const metrics = parsePrometheusText(await (await fetch(`${router.url}/metrics`)).text());
      const preemptions = metrics.get("maitred_priority_preemptions_total") ?? [];
      assert.equal(preemptions.find((s) => s.labels.class === "bulk")?.value, 1);
      await backend.streamClosed(); // the upstream call was stopped, not left running
    } finally {
      backend.release();
      await router.close();
      await backend.close();
    }
  });
}

test("a request whose first byte was committed is never preempted: the system request waits", async () => {
  const backend = await startFakeBackend({ numGpuBlocks: CAPACITY_BLOCKS, holdAfter: 1 });
  const router = await startTestRouter({ backends: backend.url }, { yaml: TENANTS });
  try {
    const bulk = open(
      router.url,
      { program_id: "committed", stream: true, messages: prompt(5000) },
      { "x-priority": "bulk", "x-program-final": "true" },
    );
    const res = await bulk; // with priorities on, the head goes out at the commit
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["x-maitred-class"], "bulk");
    await backend.held(); // one token out, the rest held
    // The backend holds every stream after its first token; not this one.
    const sys = open(
      router.url,
      { program_id: "control", messages: prompt(3000) },
      { ...SYSTEM_HEADERS, "x-fake-no-hold": "1" },
    );
    await router.waitForEvent((e) => e.kind === "request_arrived" && e.priorityClass === "system");
    const pr = router.loop.scheduler.snapshot().priority;
    assert.equal(pr?.classes.bulk.preemptions, 0, "a committed request is not a victim");
    assert.equal(pr?.classes.system.queued, 1);

    backend.release();
    assert.match(await bodyOf(res), /\[DONE\]/, "the committed stream ran to its end");
    const sysRes = await sys;
    assert.equal(sysRes.statusCode, 200, "then the system request got the room");
    await bodyOf(sysRes);
  } finally {
    backend.release();
    await router.close();
    await backend.close();
  }
});

test("with priorities off nothing is gated: the stream head goes out before any backend chunk", async () => {
  const backend = await startFakeBackend({ tokens: 3 });
  const router = await startTestRouter({ backends: backend.url });
  try {
    const res = await open(
      router.url,
      { program_id: "p", stream: true, messages: [] },
      { "x-fake-hold-first": "1" },
    );
    assert.equal(res.statusCode, 200, "the head arrives while the backend has sent no chunk yet");
    assert.equal(res.headers["x-upstream"], "fake");
    backend.release();
    assert.match(await bodyOf(res), /t3/);
    assert.equal(router.loop.scheduler.snapshot().priority, undefined, "priorities are off");
  } finally {
    backend.release();
    await router.close();
    await backend.close();
  }
});
