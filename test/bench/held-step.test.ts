import assert from "node:assert/strict";
import { test } from "node:test";
import { createStepClient, type StepResponse } from "../../src/bench/step-client.ts";
import { type FakeBackend, startFakeBackend } from "../integration/helpers/fake-backend.ts";
import { withHeldRouter } from "../integration/helpers/held-router.ts";
import { startTestRouter, type TestRouter } from "../integration/helpers/test-router.ts";

/**
 * The bench's step client against a router that holds its streamed request
 * (helpers/held-router.ts: what arrives waits until the test gives the backend room and runs a
 * tick; time is the router's manual clock). With `--hold-keepalive on` maitred answers a held
 * stream at once and says in SSE comments what its headers say otherwise; with `off` it sends
 * its head once the request is seated, as before. Each step must be recorded the same both
 * ways: the time held, or the router's error with its status and Retry-After.
 */

const KEEPALIVE = ["on", "off"] as const;

/** One streamed step of program `programId`; `headers` go with it. */
function sendStep(
  router: TestRouter,
  programId: string,
  options: { headers?: Record<string, string>; priorityClass?: string; content?: string } = {},
): Promise<StepResponse> {
  const client = createStepClient({ url: router.url, connections: 1, headers: options.headers });
  return client
    .send(
      {
        programId,
        model: "m",
        messages: [{ role: "user", content: options.content ?? "hi" }],
        maxTokens: 5,
        priorityClass: options.priorityClass,
      },
      new AbortController().signal,
    )
    .finally(() => client.close());
}

/** Resolves once the router has the request in hand (held: nothing can place it yet). */
async function arrived(router: TestRouter): Promise<void> {
  await router.waitForEvent((e) => e.kind === "request_arrived");
  assert.ok(router.loop.scheduler.snapshot().queueLength > 0, "the request is held");
}

/** `run` once per `--hold-keepalive` setting, its step's response by setting. */
async function bothWays(
  run: (router: TestRouter, backend: FakeBackend) => Promise<StepResponse>,
): Promise<Record<(typeof KEEPALIVE)[number], StepResponse>> {
  const out: Partial<Record<(typeof KEEPALIVE)[number], StepResponse>> = {};
  for (const keepalive of KEEPALIVE) {
    await withHeldRouter(
      async (router, backend) => {
        out[keepalive] = await run(router, backend);
      },
      { "hold-keepalive": keepalive },
    );
  }
  return out as Record<(typeof KEEPALIVE)[number], StepResponse>;
}

test("a step held 30 s records 30 s paused, from the held stream's comment as from the header", async () => {
  const got = await bothWays(async (router, backend) => {
    const step = sendStep(router, "waits");
    await arrived(router);
    router.clock.advance(30_000);
    backend.setNumGpuBlocks(4096);
    await router.ticker.runOnce();
    return step;
  });
  for (const keepalive of KEEPALIVE) {
    const res = got[keepalive];
    assert.ok(res.ok, `--hold-keepalive ${keepalive}: ${JSON.stringify(res)}`);
    assert.equal(res.pausedMs, 30_000, `--hold-keepalive ${keepalive}`);
    assert.equal(res.completionTokens, 5);
  }
});

/** Ways a hold ends in an error, and the step each must be recorded as, held or not. */
const HOLD_ENDINGS: Array<{
  what: string;
  headers?: Record<string, string>;
  end(router: TestRouter, backend: FakeBackend): Promise<unknown>;
  expected: StepResponse;
}> = [
  {
    what: "past x-maitred-max-wait-ms is the router's 503 with its Retry-After",
    headers: { "x-maitred-max-wait-ms": "20000" },
    end: async (router) => router.clock.advance(20_000),
    expected: {
      ok: false,
      kind: "http_503_ServiceUnavailableError",
      status: 503,
      retryAfterMs: 1000,
    },
  },
  {
    what: "at shutdown is the router's 503 with its Retry-After",
    end: (router) => router.close(),
    expected: {
      ok: false,
      kind: "http_503_ServiceUnavailableError",
      status: 503,
      retryAfterMs: 5000,
    },
  },
  {
    what: "in the backend's error is its status and error type",
    headers: { "x-fake-status": "400" },
    end: async (router, backend) => {
      router.clock.advance(1_000);
      backend.setNumGpuBlocks(4096);
      await router.ticker.runOnce();
    },
    expected: { ok: false, kind: "http_400_X", status: 400, retryAfterMs: null },
  },
];

for (const ending of HOLD_ENDINGS) {
  test(`a hold that ends ${ending.what}`, async () => {
    const got = await bothWays(async (router, backend) => {
      const step = sendStep(router, "ends", { headers: ending.headers });
      await arrived(router);
      await ending.end(router, backend);
      return step;
    });
    assert.deepEqual(got.on, ending.expected);
    assert.deepEqual(got.off, got.on);
  });
}

// As in test/integration/first-byte-gate.test.ts: 100 blocks × 16 = 1600 tokens, room for the
// bulk prompt (≈ 1100 tokens) alone; the system prompt (≈ 700) then fits only in its room.
const TENANTS = `priority:
  tenants:
    ops: { max_class: system, api_keys: [sk-ops] }
`;

test("a held step preempted before its first byte counts as a preemption, with the router's Retry-After", async () => {
  const got: Partial<Record<(typeof KEEPALIVE)[number], StepResponse>> = {};
  for (const keepalive of KEEPALIVE) {
    const backend = await startFakeBackend({ numGpuBlocks: 0 });
    const router = await startTestRouter(
      { backends: backend.url, "scheduler-interval": "3600", "hold-keepalive": keepalive },
      { yaml: TENANTS },
    );
    try {
      // Held (no room yet), then seated; the backend sends its head and nothing more.
      const step = sendStep(router, "victim", {
        headers: { "x-fake-hold-first": "1" },
        priorityClass: "bulk",
        content: "x".repeat(5000),
      });
      await arrived(router);
      backend.setNumGpuBlocks(100);
      await router.ticker.runOnce();
      await backend.held();
      const sys = await fetch(`${router.url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-priority": "system",
          authorization: "Bearer sk-ops",
        },
        body: JSON.stringify({
          model: "m",
          program_id: "control",
          messages: [{ role: "user", content: "x".repeat(3000) }],
        }),
      });
      assert.equal(sys.status, 200, "the system request took the bulk program's room");
      await sys.text();
      got[keepalive] = await step;
    } finally {
      backend.release();
      await router.close();
      await backend.close();
    }
  }
  assert.deepEqual(got.on, {
    ok: false,
    kind: "http_503_preempted",
    status: 503,
    retryAfterMs: 1000,
  });
  assert.deepEqual(got.on, got.off);
});
