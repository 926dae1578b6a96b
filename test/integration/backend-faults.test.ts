import assert from "node:assert/strict";
import { test } from "node:test";
import type { SchedulerEvent } from "../../src/core/events.ts";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

type Tick = Extract<SchedulerEvent, { kind: "tick" }>;
const isTick = (e: SchedulerEvent): e is Tick => e.kind === "tick";

function chatAs(router: TestRouter, program: string, stream: boolean) {
  return fetch(`${router.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "m",
      stream,
      program_id: program,
      messages: [{ role: "user", content: "hi" }],
    }),
  });
}

function healthy(router: TestRouter, id: string): boolean {
  const b = router.loop.scheduler.snapshot().backends.find((x) => x.id === id);
  assert.ok(b, `backend ${id} is known`);
  return b.healthy;
}

test("a frozen /metrics makes its backend unhealthy two intervals plus the poll timeout after its first unanswered poll, and never holds up another backend's figures", async () => {
  const a = await startFakeBackend();
  const b = await startFakeBackend();
  // Ticks every 5 s, polls time out after 10 s, and a tick waits 1.25 s for the answers.
  const router = await startTestRouter({
    backends: `${a.url},${b.url}`,
    "scheduler-interval": "5",
    "poll-timeout": "10",
  });
  try {
    const t0 = router.clock.now(); // the start-up tick
    b.freezeMetrics(true);
    const failures: number[] = [];
    for (let round = 1; round <= 3; round++) {
      const start = t0 + round * 5000;
      const aFigures = router.nextEvent((e) => isTick(e) && e.metrics[a.url] != null);
      // Round k's poll of b times out at k·5 s + 10 s: the moment round k+2 starts.
      const bFails =
        round >= 3 ? router.nextEvent((e) => isTick(e) && e.metrics[b.url] === null) : null;
      router.clock.advance(start - router.clock.now());
      if (bFails) failures.push(((await bFails) as Tick).now - t0);
      router.clock.advance(1250);
      const got = (await aFigures) as Tick;
      assert.ok(got.now <= start + 1250, `a's figures of round ${round} came at once`);
      assert.equal(healthy(router, a.url), true);
    }
    assert.deepEqual(failures, [15_000], "round 1's poll failed at its own timeout");
    assert.equal(healthy(router, b.url), true, "one failure is not yet unhealthy");
    for (const due of [20_000, 25_000]) {
      const bFails = router.nextEvent((e) => isTick(e) && e.metrics[b.url] === null);
      router.clock.advance(t0 + due - router.clock.now());
      failures.push(((await bFails) as Tick).now - t0);
    }
    assert.deepEqual(failures, [15_000, 20_000, 25_000]);
    // First unanswered poll at 5 s; unhealthy at 5 s + 2 × 5 s + 10 s.
    assert.equal(healthy(router, b.url), false);
    assert.equal(healthy(router, a.url), true);
  } finally {
    await router.close();
    await a.close();
    await b.close();
  }
});

test("a request whose backend refuses the connection is tried once on another, and its program moves there", async () => {
  const backends = [await startFakeBackend(), await startFakeBackend()];
  const router = await startTestRouter({ backends: backends.map((b) => b.url).join(",") });
  const chat = (stream: boolean) => chatAs(router, "agent-1", stream);
  try {
    const first = await chat(false);
    assert.equal(first.status, 200);
    await first.text();
    const home = first.headers.get("x-maitred-backend");
    const dead = backends.find((b) => b.url === home);
    const alive = backends.find((b) => b.url !== home);
    assert.ok(dead && alive);
    await dead.close(); // nothing listens there any more: connections are refused
    for (const stream of [true, false]) {
      const res = await chat(stream);
      const body = await res.text();
      assert.equal(res.status, 200, body);
      assert.equal(res.headers.get("x-maitred-backend"), alive.url);
    }
    assert.equal(healthy(router, dead.url), false, "out of placement at once");
    const p = router.loop.scheduler.program("agent-1");
    assert.equal(p?.backend, alive.url, "the program was placed anew");
    const metrics = await (await fetch(`${router.url}/metrics`)).text();
    assert.match(
      metrics,
      /^maitred_upstream_retries_total 1$/m,
      "one retry: the second request found the program moved",
    );
    assert.match(metrics, /^maitred_upstream_errors_total\{kind="unreachable"\} 1$/m);
    // The failed try ended in the core: nothing is left in flight.
    assert.equal(router.loop.scheduler.snapshot().programs[0]?.inFlight, 0);
  } finally {
    await router.close();
    await backends[0].close().catch(() => {});
    await backends[1].close().catch(() => {});
  }
});

test("a backend that dies mid-answer: a plain answer not yet relayed is tried again elsewhere; a stream already started ends with an error event", async () => {
  const dying = await startFakeBackend({ holdAfter: 1, dieMidStream: true });
  const good = await startFakeBackend();
  const router = await startTestRouter({ backends: `${dying.url},${good.url}` });
  const chat = (program: string, stream: boolean) => chatAs(router, program, stream);
  try {
    // New programs go to the first backend with the most room: the dying one. Its answer
    // starts (role and first token) and then the engine dies.
    const plainRes = chat("plain-1", false);
    await dying.held();
    dying.release();
    const plain = await plainRes;
    const body = (await plain.json()) as { choices: { message: { content: string } }[] };
    assert.equal(plain.status, 200, JSON.stringify(body));
    assert.equal(plain.headers.get("x-maitred-backend"), good.url);
    assert.equal(body.choices[0]?.message.content, "t1t2t3t4t5");
    assert.equal(healthy(router, dying.url), false);
    // A poll brings it back. A stream placed there relays its head at once, so once the backend
    // dies it cannot be tried again: the client reads an error event.
    await router.ticker.runOnce();
    assert.equal(healthy(router, dying.url), true);
    const streamedRes = chat("stream-1", true);
    await dying.held();
    const streamed = await streamedRes;
    assert.equal(streamed.status, 200);
    assert.equal(streamed.headers.get("x-maitred-backend"), dying.url);
    dying.release();
    assert.match(await streamed.text(), /"error"/);
    const metrics = await (await fetch(`${router.url}/metrics`)).text();
    assert.match(metrics, /^maitred_upstream_retries_total 1$/m);
  } finally {
    await router.close();
    await dying.close();
    await good.close();
  }
});
