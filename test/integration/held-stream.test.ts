import assert from "node:assert/strict";
import { connect } from "node:net";
import { test } from "node:test";
import { createScheduler } from "../../src/core/scheduler.ts";
import { NEW_PROGRAM_START_MS } from "../../src/core/scheduler-constants.ts";
import { createLogger } from "../../src/util/logger.ts";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { withHeldRouter } from "./helpers/held-router.ts";
import { openStream } from "./helpers/stream-reader.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

/** Held streams over real sockets (helpers/held-router.ts: what arrives is held until let go). */
const isHeld = (router: TestRouter) => router.loop.scheduler.snapshot().queueLength > 0;

for (const priority of [false, true]) {
  test(`a held stream gets its head at once, its place every 15 s, then its events after a comment naming the backend${priority ? " (priorities on)" : ""}`, async () => {
    await withHeldRouter(
      async (router, backend) => {
        const s = await openStream(router, "long", { content: "x".repeat(2000) });
        assert.ok(isHeld(router), "the head came while the request is held");
        assert.equal(s.res.status, 200);
        assert.match(s.res.headers.get("content-type") ?? "", /^text\/event-stream/);
        assert.equal(s.res.headers.get("x-maitred-held"), "true");
        assert.equal(s.res.headers.get("x-maitred-program"), "long");
        assert.equal(s.res.headers.get("x-maitred-backend"), null, "not chosen yet");
        assert.ok(s.res.headers.get("x-request-id"));
        await s.until((t) => t.includes(": maitred held position=1 waited_ms=0\n\n"));
        // A smaller program held after it comes first in the resume order (smallest first).
        const small = await openStream(router, "short");
        router.clock.advance(15_000);
        await s.until((t) => t.includes(": maitred held position=2 waited_ms=15000\n\n"));
        // Past the start bound a new program's first request goes first (oldest first).
        router.clock.advance(15_000);
        await s.until((t) => t.includes(": maitred held position=1 waited_ms=30000\n\n"));
        assert.doesNotMatch(s.text, /^data:/m, "nothing but comments while held");

        backend.setNumGpuBlocks(4096);
        await router.ticker.runOnce();
        const body = await s.end();
        const placed = `: maitred backend=${backend.url} paused_ms=30000\n\n`;
        const at = body.indexOf(placed);
        assert.ok(at > 0, body);
        assert.equal(body.indexOf("data:"), at + placed.length, "right before the first event");
        const content = body
          .split("\n\n")
          .filter((e) => e.startsWith("data: {"))
          .map((e) => JSON.parse(e.slice(6)).choices[0]?.delta?.content ?? "")
          .join("");
        assert.equal(content, "t1t2t3t4t5");
        assert.ok(body.endsWith("data: [DONE]\n\n"));
        assert.doesNotMatch(body, /"error"/);
        await small.end();
        assert.equal(router.loop.scheduler.audit?.().length, 0, "the books are clean");
      },
      priority ? { priority: true } : {},
    );
  });
}

test("a hold that ends in an error ends the stream with vLLM's error event and [DONE]", async () => {
  await withHeldRouter(async (router) => {
    const s = await openStream(router, "impatient", {
      headers: { "x-maitred-max-wait-ms": "20000" },
    });
    router.clock.advance(20_000);
    const body = await s.end();
    assert.match(body, /: maitred held position=1 waited_ms=15000\n\n/);
    const tail = body.slice(body.indexOf(": maitred status="));
    const [status, event, done] = tail.split("\n\n");
    assert.equal(status, ": maitred status=503 retry_after=1");
    assert.deepEqual(JSON.parse(event.replace(/^data: /, "")), {
      error: {
        message: "Program was paused for 20000 ms, longer than x-maitred-max-wait-ms allows.",
        type: "ServiceUnavailableError",
        param: null,
        code: "paused_too_long",
      },
    });
    assert.equal(done, "data: [DONE]");
    assert.ok(body.endsWith("data: [DONE]\n\n"));
    assert.equal(isHeld(router), false);
  });
});

test("a stream held at shutdown is told so in an error event, and close() resolves", async () => {
  await withHeldRouter(async (router) => {
    const s = await openStream(router, "late");
    const closed = router.close();
    const body = await s.end();
    assert.match(
      body,
      /: maitred status=503 retry_after=5\n\ndata: \{"error":\{.*"code":"shutting_down"\}\}\n\ndata: \[DONE\]\n\n$/,
    );
    await closed;
  });
});

test("--hold-keepalive off sends nothing until the request is seated", async () => {
  await withHeldRouter(
    async (router, backend) => {
      // Read off the raw socket: a response has one head, and bytes on one connection arrive in
      // the order they were written, so had a head gone out while the request was held, it (and
      // not the seated head) would be what the socket delivers first.
      const socket = connect(Number(new URL(router.url).port), "127.0.0.1");
      let received = "";
      let receivedWhileHeld = "";
      let granted = false;
      socket.setEncoding("utf8");
      socket.on("data", (piece: string) => {
        received += piece;
        if (!granted) receivedWhileHeld += piece;
      });
      const closed = new Promise<void>((resolve, reject) => {
        socket.on("end", resolve);
        socket.on("error", reject);
      });
      const body = JSON.stringify({ model: "m", stream: true, program_id: "quiet", messages: [] });
      socket.write(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: router\r\nconnection: close\r\n" +
          `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await router.waitForEvent((e) => e.kind === "request_arrived");
      router.clock.advance(30_000);
      assert.ok(isHeld(router));
      granted = true;
      assert.equal(receivedWhileHeld, "", "no byte while held");
      backend.setNumGpuBlocks(4096);
      await router.ticker.runOnce();
      await closed;
      const headEnd = received.indexOf("\r\n\r\n");
      const head = received.slice(0, headEnd).toLowerCase();
      assert.match(head, /^http\/1\.1 200 ok\r\n/, "the first thing on the socket is a head");
      assert.ok(head.includes(`\r\nx-maitred-backend: ${backend.url}\r\n`), head);
      assert.ok(head.includes("\r\nx-maitred-paused-ms: 30000\r\n"), head);
      assert.ok(!head.includes("x-maitred-held"), head);
      assert.equal(received.split("HTTP/1.1 ").length, 2, "one head only");
      const rest = received.slice(headEnd + 4);
      assert.doesNotMatch(rest, /^:/m, "no comments");
      assert.match(rest, /data: \[DONE\]\n\n/);
    },
    { "hold-keepalive": "off" },
  );
});

test("a held stream whose backend refuses it is tried once more on another, its head and comments no obstacle", async () => {
  const a = await startFakeBackend({ numGpuBlocks: 0 });
  const b = await startFakeBackend({ numGpuBlocks: 0 });
  let refused = false;
  const router = await startTestRouter(
    { backends: `${a.url},${b.url}`, "scheduler-interval": "3600" },
    {
      hooks: {
        // Seated on a, a stops listening before the request reaches it: the connection is refused.
        onDispatch(_id, grant) {
          if (grant.backendId === a.url && !refused) {
            refused = true;
            void a.close();
          }
        },
      },
    },
  );
  try {
    const s = await openStream(router, "moving");
    await s.until((t) => t.includes(": maitred held position=1"));
    a.setNumGpuBlocks(4096);
    const retried = router.waitForEvent((e) => e.kind === "request_arrived" && e.retry === true);
    await router.ticker.runOnce();
    await retried;
    assert.ok(refused, "it was sent to a first");
    assert.ok(isHeld(router), "the retry waits for room like any request");
    b.setNumGpuBlocks(4096);
    await router.ticker.runOnce();
    const body = await s.end();
    assert.match(body, new RegExp(`: maitred backend=${b.url} paused_ms=\\d+\n\ndata: \\{`));
    assert.doesNotMatch(body, /"error"/);
    assert.ok(body.endsWith("data: [DONE]\n\n"));
    const metrics = await (await fetch(`${router.url}/metrics`)).text();
    assert.match(metrics, /^maitred_upstream_retries_total 1$/m);
    assert.equal(router.loop.scheduler.program("moving")?.backend, b.url);
  } finally {
    await router.close();
    await a.close().catch(() => {});
    await b.close();
  }
});

test("GET /programs/:id shows a held program's place, its wait and the bounds on it", async () => {
  await withHeldRouter(async (router, backend) => {
    const s = await openStream(router, "waiting");
    router.clock.advance(15_000);
    const res = await fetch(`${router.url}/programs/waiting`);
    assert.equal(res.status, 200);
    const { hold } = (await res.json()) as { hold: Record<string, unknown> };
    const { ageingMs, maxPauseMs } = router.config;
    assert.equal(hold.position, 1);
    assert.equal(hold.held_programs, 1);
    assert.equal(hold.waited_ms, 15_000);
    // A new program's first request: room is made for it at the start bound, the shortest.
    const bound = Math.min(ageingMs || maxPauseMs, maxPauseMs, NEW_PROGRAM_START_MS);
    assert.equal(hold.room_made_by, bound === NEW_PROGRAM_START_MS ? "new_program" : "ageing");
    assert.equal(hold.room_made_in_ms, bound - 15_000);
    assert.equal(hold.seated_in_ms, maxPauseMs - 15_000);
    assert.equal(hold.seated_by, (hold.held_since as number) + maxPauseMs);
    assert.equal(hold.max_wait_at, null);
    backend.setNumGpuBlocks(4096);
    await router.ticker.runOnce();
    await s.end();
    const after = (await (await fetch(`${router.url}/programs/waiting`)).json()) as {
      hold: unknown;
    };
    assert.equal(after.hold, null, "nothing held once seated");
  });
});

/**
 * A held stream seated after `heldMs` on a backend that answers it with the error `headers` ask
 * the fake backend for: its comment naming the backend and what follows.
 */
async function heldErrorTail(headers: Record<string, string>, heldMs = 0) {
  let tail = "";
  let url = "";
  await withHeldRouter(async (router, backend) => {
    url = backend.url;
    const s = await openStream(router, "refused", { headers });
    router.clock.advance(heldMs);
    backend.setNumGpuBlocks(4096);
    await router.ticker.runOnce();
    const body = await s.end();
    tail = body.slice(body.indexOf(": maitred backend="));
  });
  return { tail, url };
}

test("a held stream whose backend answers with an error gets that error as its event, its status in the comment", async () => {
  const { tail, url } = await heldErrorTail({ "x-fake-status": "400" }, 1_000);
  assert.equal(
    tail,
    `: maitred backend=${url} paused_ms=1000 status=400\n\n` +
      'data: {"error":{"message":"fake failure","type":"X","param":null,"code":400}}\n\n' +
      "data: [DONE]\n\n",
  );
});

/** What SGLang (and vLLM before the envelope) answers a prompt too long for the model. */
const FLAT_ERROR = {
  object: "error",
  message: "The prompt is too long for this model's context length.",
  type: "BadRequestError",
  param: null,
  code: 400,
};

for (const [shape, status, body, error] of [
  [
    "flat (SGLang's)",
    "400",
    FLAT_ERROR,
    { message: FLAT_ERROR.message, type: "BadRequestError", param: null, code: 400 },
  ],
  [
    "FastAPI's detail",
    "404",
    { detail: "Not Found" },
    { message: "Not Found", type: "NotFoundError", param: null, code: null },
  ],
] as const) {
  test(`a held stream whose backend answers an error ${shape} gets it as an error event in the envelope`, async () => {
    const headers = { "x-fake-status": status, "x-fake-error-body": JSON.stringify(body) };
    const { tail, url } = await heldErrorTail(headers);
    assert.equal(
      tail,
      `: maitred backend=${url} paused_ms=0 status=${status}\n\n` +
        `data: ${JSON.stringify({ error })}\n\ndata: [DONE]\n\n`,
    );
  });
}

test("a held stream keeps its comments going when the core cannot say where it stands, and warns once", async () => {
  const lines: Array<{ level: string; msg: string }> = [];
  const logger = createLogger({ level: "warn", write: (l) => lines.push(JSON.parse(l)) });
  const backend = await startFakeBackend({ numGpuBlocks: 0 });
  const router = await startTestRouter(
    { backends: backend.url, "scheduler-interval": "3600" },
    {
      logger,
      // The real core, except that asking where a held request stands throws.
      createScheduler: (options) => ({
        ...createScheduler(options),
        holdOf() {
          throw new Error("holdOf broke");
        },
      }),
    },
  );
  try {
    const s = await openStream(router, "lost");
    assert.equal(s.res.status, 200);
    await s.until((t) => t.endsWith(": maitred held\n\n"));
    // Each beat runs in the clock's timer; a throw out of one would end the advance (and, on the
    // real clock, the process) and no later beat would come.
    router.clock.advance(15_000);
    router.clock.advance(15_000);
    await s.until((t) => t.split(": maitred held\n\n").length - 1 === 3);
    assert.deepEqual(
      lines.filter((l) => l.msg.includes("held request")).map((l) => l.level),
      ["warn"],
      "warned once, not at every beat",
    );
    backend.setNumGpuBlocks(4096);
    await router.ticker.runOnce();
    const body = await s.end();
    assert.match(body, new RegExp(`: maitred backend=${backend.url} paused_ms=30000\n\ndata: \\{`));
    assert.ok(body.endsWith("data: [DONE]\n\n"));
    assert.doesNotMatch(body, /"error"/);
  } finally {
    await router.close();
    await backend.close();
  }
});

test("a stream seated at once is relayed as before: its backend's head, no comment, no timer", async () => {
  const backend = await startFakeBackend();
  const router = await startTestRouter({ backends: backend.url, "scheduler-interval": "3600" });
  try {
    const timers = router.clock.pendingTimers();
    const s = await openStream(router, "quick");
    assert.equal(router.clock.pendingTimers(), timers, "no keep-alive timer");
    assert.equal(s.res.headers.get("x-maitred-backend"), backend.url);
    assert.equal(s.res.headers.get("x-upstream"), "fake", "the backend's own headers");
    assert.equal(s.res.headers.get("x-maitred-held"), null);
    const body = await s.end();
    assert.doesNotMatch(body, /^:/m);
    assert.ok(body.endsWith("data: [DONE]\n\n"));
  } finally {
    await router.close();
    await backend.close();
  }
});
