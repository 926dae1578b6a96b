import assert from "node:assert/strict";
import { request } from "node:http";
import { test } from "node:test";
import { parsePrometheusText } from "../../src/backends/prometheus-text.ts";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

/**
 * Per-class queues over real sockets. A backend whose capacity is unknown places nothing, so
 * every program request queues (429, 408, 499 are then deterministic). Preemption and the
 * first-byte gate are first-byte-gate.test.ts's. Time is the router's manual clock; the tests
 * wait on router events, never on elapsed time.
 */

/** POST a chat request and hand back the live response; `abort()` drops the connection. */
function open(url: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const req = request(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
  });
  req.on("error", () => {}); // an abort is the point of some tests
  const response = new Promise<import("node:http").IncomingMessage>((resolve) =>
    req.on("response", resolve),
  );
  req.end(JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], ...body }));
  return { response, abort: () => req.destroy() };
}

async function bodyOf(res: import("node:http").IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of res) text += chunk;
  return text;
}

const QUEUES = `priority:
  classes:
    default: { queue_depth: 1, queue_timeout: 1s }
`;

test("a full class queue answers 429 at once with Retry-After; a client leaving the queue counts as 499", async () => {
  const backend = await startFakeBackend({ numGpuBlocks: 0 });
  const router = await startTestRouter({ backends: backend.url }, { yaml: QUEUES });
  try {
    const first = open(router.url, { program_id: "a" });
    await router.waitForEvent((e) => e.kind === "request_arrived");
    assert.equal(router.loop.scheduler.snapshot().priority?.classes.default.queued, 1);

    const second = await await fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [], program_id: "b" }),
    });
    assert.equal(second.status, 429);
    assert.equal(second.headers.get("retry-after"), "1");
    assert.equal(second.headers.get("x-maitred-class"), "default");
    const body = (await second.json()) as { error: { type: string; message: string } };
    assert.equal(body.error.type, "RateLimitError");
    assert.match(body.error.message, /default queue is full/);

    first.abort();
    const finished = await router.waitForEvent(
      (e) => e.kind === "request_finished" && e.outcome === "client_closed",
    );
    assert.ok(finished);
    const pr = router.loop.scheduler.snapshot().priority;
    assert.equal(pr?.classes.default.queued, 0, "the queue is free again at once");
    assert.deepEqual(pr?.classes.default.admissions, {
      admitted: 0,
      queued: 1,
      queue_full: 1,
      queue_timeout: 0,
      client_closed: 1,
      preempted: 0,
    });

    const metrics = parsePrometheusText(await (await fetch(`${router.url}/metrics`)).text());
    const adm = metrics.get("maitred_priority_admissions_total") ?? [];
    const of = (outcome: string) =>
      adm.find((s) => s.labels.class === "default" && s.labels.outcome === outcome)?.value;
    assert.equal(of("queue_full"), 1);
    assert.equal(of("client_closed"), 1);
    assert.equal(adm.length, 4 * 6, "every class × outcome series is exported");
    assert.equal(
      backend.received.filter((r) => r.path.startsWith("/v1/")).length,
      0,
      "nothing was forwarded",
    );
  } finally {
    await router.close();
    await backend.close();
  }
});

test("a request queued past its class timeout is answered 408", async () => {
  const backend = await startFakeBackend({ numGpuBlocks: 0 });
  const router = await startTestRouter({ backends: backend.url }, { yaml: QUEUES });
  try {
    const waiting = open(router.url, { program_id: "slow" }, { "x-priority": "default" });
    await router.waitForEvent((e) => e.kind === "request_arrived");
    router.clock.advance(999);
    assert.equal(router.loop.scheduler.snapshot().queueLength, 1, "still within its 1 s");
    router.clock.advance(1); // the deadline tick armed when it parked
    const res = await waiting.response;
    assert.equal(res.statusCode, 408);
    assert.equal(res.headers["x-maitred-class"], "default");
    const body = JSON.parse(await bodyOf(res)) as { error: { type: string } };
    assert.equal(body.error.type, "RequestTimeoutError");
    assert.equal(
      router.loop.scheduler.snapshot().priority?.classes.default.admissions.queue_timeout,
      1,
    );
  } finally {
    await router.close();
    await backend.close();
  }
});
