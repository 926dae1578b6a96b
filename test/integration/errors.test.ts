import assert from "node:assert/strict";
import { createServer } from "node:net";
import { test } from "node:test";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

interface Envelope {
  error: { message: string; type: string; param: string | null; code: string | number };
}

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  return { res, json: (await res.json()) as Envelope };
}

/** A loopback port nothing listens on. */
async function deadUrl(): Promise<string> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

test("malformed JSON is a 400 in the OpenAI envelope, and the router keeps serving", async () => {
  const backend = await startFakeBackend();
  const router = await startTestRouter({ backends: backend.url });
  try {
    const { res, json } = await post(router.url, "{not json");
    assert.equal(res.status, 400);
    assert.equal(json.error.type, "BadRequestError");
    assert.equal(
      json.error.code,
      "invalid_json",
      "a stable name, as the OpenAI schema has a string",
    );
    assert.match(json.error.message, /not valid JSON/);
    const ok = await post(router.url, JSON.stringify({ model: "m", messages: [] }));
    assert.equal(ok.res.status, 200);
  } finally {
    await router.close();
    await backend.close();
  }
});

test("a body over --max-body-size is a 413", async () => {
  const backend = await startFakeBackend();
  const router = await startTestRouter({ backends: backend.url, "max-body-size": "1KiB" });
  try {
    const { res, json } = await post(
      router.url,
      JSON.stringify({ model: "m", messages: [{ role: "user", content: "x".repeat(2000) }] }),
    );
    assert.equal(res.status, 413);
    assert.equal(json.error.type, "PayloadTooLargeError");
  } finally {
    await router.close();
    await backend.close();
  }
});

test("a backend that stops listening is a 502 and counts as a backend failure", async () => {
  const backend = await startFakeBackend();
  const router = await startTestRouter({ backends: backend.url, router: "default" });
  await backend.close(); // it answered the start-up tick, and is gone now
  try {
    const { res, json } = await post(router.url, JSON.stringify({ model: "m", messages: [] }));
    assert.equal(res.status, 502);
    assert.equal(json.error.type, "BadGatewayError");
    const finished = await router.waitForEvent((e) => e.kind === "request_finished");
    assert.equal(finished.kind === "request_finished" && finished.outcome, "backend_unreachable");
    await router.waitForEvent((e) => e.kind === "backend_failure");
  } finally {
    await router.close();
  }
});

test("with every backend unhealthy a request is a 503 with Retry-After", async () => {
  const router = await startTestRouter({
    backends: await deadUrl(),
    "unhealthy-after-failures": "2",
  });
  try {
    // Never having answered a poll, it is unhealthy after the start-up tick's failure.
    assert.equal(router.loop.scheduler.snapshot().backends[0]?.healthy, false);
    const { res, json } = await post(
      router.url,
      JSON.stringify({ model: "m", messages: [], program_id: "p" }),
    );
    assert.equal(res.status, 503);
    assert.ok(res.headers.get("retry-after"), "Retry-After tells the client when to come back");
    assert.equal(json.error.type, "ServiceUnavailableError");
  } finally {
    await router.close();
  }
});

test("a request parked longer than x-maitred-max-wait-ms gets a 503 with Retry-After", async () => {
  // Capacity unknown: no backend is placeable, so a new program's request parks.
  const backend = await startFakeBackend({ numGpuBlocks: 0 });
  const router = await startTestRouter({ backends: backend.url });
  try {
    const pending = post(
      router.url,
      JSON.stringify({ model: "m", messages: [], program_id: "p-wait" }),
      {
        "x-maitred-max-wait-ms": "2000",
      },
    );
    await router.waitForEvent((e) => e.kind === "request_arrived");
    router.clock.advance(1999);
    assert.equal(router.loop.scheduler.snapshot().queueLength, 1, "still waiting before the limit");
    router.clock.advance(1);
    const { res, json } = await pending;
    assert.equal(res.status, 503);
    assert.ok(res.headers.get("retry-after"));
    assert.match(json.error.message, /paused for 2000 ms/);
    assert.equal(router.loop.scheduler.snapshot().queueLength, 0);
  } finally {
    await router.close();
    await backend.close();
  }
});

test("a request parked with x-maitred-max-wait-ms 0 is answered at once, not on a later tick", async () => {
  const backend = await startFakeBackend({ numGpuBlocks: 0 });
  const router = await startTestRouter({ backends: backend.url });
  try {
    const pending = post(
      router.url,
      JSON.stringify({ model: "m", messages: [], program_id: "p-now" }),
      { "x-maitred-max-wait-ms": "0" },
    );
    await router.waitForEvent((e) => e.kind === "request_arrived");
    router.clock.advance(0);
    const { res, json } = await pending;
    assert.equal(res.status, 503);
    assert.match(json.error.message, /paused for 0 ms/);
  } finally {
    await router.close();
    await backend.close();
  }
});

test("unknown routes and programs are 404 envelopes", async () => {
  const backend = await startFakeBackend();
  const router = await startTestRouter({ backends: backend.url });
  try {
    const a = await fetch(`${router.url}/v2/nothing`);
    assert.equal(a.status, 404);
    assert.equal(((await a.json()) as Envelope).error.type, "NotFoundError");
    const b = await fetch(`${router.url}/programs/nobody`);
    assert.equal(b.status, 404);
    assert.equal(((await b.json()) as Envelope).error.param, "program_id");
    const c = await fetch(`${router.url}/profiles`);
    assert.equal(c.status, 400, "profiles without --profile");
  } finally {
    await router.close();
    await backend.close();
  }
});

test("garbage of every shape never takes the router down", async () => {
  const backend = await startFakeBackend();
  const router = await startTestRouter({ backends: backend.url });
  try {
    const bodies = [
      "",
      "null",
      "[]",
      '"str"',
      "42",
      '{"program_id":{"a":1}}',
      '{"stream":true,"stream_options":5}',
      "\u0000\u0001",
    ];
    for (const body of bodies) {
      const { res } = await post(router.url, body);
      assert.equal(res.status, 400, `body ${JSON.stringify(body)}: got ${res.status}, want 400`);
    }
    const release = await fetch(`${router.url}/programs/release`, { method: "POST", body: "{{" });
    assert.equal(release.status, 400);
    const health = await fetch(`${router.url}/health`);
    assert.equal(health.status, 200);
  } finally {
    await router.close();
    await backend.close();
  }
});

test("on shutdown a parked request is answered 503 with Retry-After and close() resolves", async () => {
  const backend = await startFakeBackend({ numGpuBlocks: 0 }); // capacity unknown: requests park
  const router = await startTestRouter({ backends: backend.url });
  const pending = post(
    router.url,
    JSON.stringify({ model: "m", messages: [], program_id: "p-shut" }),
  );
  await router.waitForEvent((e) => e.kind === "request_arrived");
  const closed = router.close();
  const { res, json } = await pending;
  assert.equal(res.status, 503);
  assert.ok(res.headers.get("retry-after"));
  assert.match(json.error.message, /shutting down/);
  await closed;
  await backend.close();
});
