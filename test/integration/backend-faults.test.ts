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

test("a frozen /metrics makes its backend unhealthy within two intervals plus the poll timeout of its first unanswered poll, and never holds up another backend's figures", async () => {
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
    // The first poll b leaves unanswered goes out at 5 s; the bound is 5 s + 2 × 5 s + 10 s.
    const healthAfter: boolean[] = [];
    for (let round = 1; round <= 4; round++) {
      const start = t0 + round * 5000;
      const aFigures = router.nextEvent((e) => isTick(e) && e.metrics[a.url] != null);
      router.clock.advance(start - router.clock.now());
      router.clock.advance(1250);
      const got = (await aFigures) as Tick;
      assert.ok(got.now <= start + 1250, `a's figures of round ${round} came within the wait`);
      assert.equal(healthy(router, a.url), true);
      healthAfter.push(healthy(router, b.url));
    }
    assert.deepEqual(healthAfter.slice(0, 2), [true, true], "one failure is not unhealthy");
    assert.equal(healthAfter[3], false, "unhealthy by 20 s, within 25 s");
  } finally {
    await router.close();
    await a.close();
    await b.close();
  }
});

for (const stream of [false, true]) {
  test(`a ${stream ? "streamed" : "plain"} request whose backend refuses the connection is tried once on another, and its program moves there`, async () => {
    const backends = [await startFakeBackend(), await startFakeBackend()];
    const router = await startTestRouter({ backends: backends.map((b) => b.url).join(",") });
    try {
      const first = await chatAs(router, "agent-1", stream);
      assert.equal(first.status, 200);
      await first.text();
      const home = first.headers.get("x-maitred-backend");
      const dead = backends.find((b) => b.url === home);
      const alive = backends.find((b) => b.url !== home);
      assert.ok(dead && alive);
      await dead.close(); // nothing listens there any more: connections are refused
      const res = await chatAs(router, "agent-1", stream);
      const body = await res.text();
      assert.equal(res.status, 200, body);
      assert.doesNotMatch(body, /"error"/);
      assert.equal(res.headers.get("x-maitred-backend"), alive.url);
      assert.equal(healthy(router, dead.url), false, "out of placement at once");
      const program = router.loop.scheduler.program("agent-1");
      assert.equal(program?.backend, alive.url, "placed anew");
      assert.equal(program?.steps, 2, "the retry is the same step, not a third");
      const metrics = await (await fetch(`${router.url}/metrics`)).text();
      assert.match(metrics, /^maitred_upstream_retries_total 1$/m);
      assert.match(metrics, /^maitred_upstream_errors_total\{kind="unreachable"\} 1$/m);
      // The failed try ended in the core: nothing is left in flight.
      assert.equal(router.loop.scheduler.snapshot().programs[0]?.inFlight, 0);
    } finally {
      await router.close();
      await backends[0].close().catch(() => {});
      await backends[1].close().catch(() => {});
    }
  });
}

test("with no other backend a dropped request is the 502 and the backend stays in placement", async () => {
  const dying = await startFakeBackend({ holdAfter: 1, dieMidStream: true });
  const router = await startTestRouter({ backends: dying.url });
  try {
    const pending = chatAs(router, "solo", false);
    await dying.held();
    dying.release();
    const res = await pending;
    assert.equal(res.status, 502);
    assert.equal(
      ((await res.json()) as { error: { code: string } }).error.code,
      "backend_unreachable",
    );
    assert.equal(healthy(router, dying.url), true, "one reset counts; it does not empty the fleet");
    const metrics = await (await fetch(`${router.url}/metrics`)).text();
    assert.match(metrics, /^maitred_upstream_retries_total 0$/m);
  } finally {
    await router.close();
    await dying.close();
  }
});

test("an answer that arrives whole but empty is a 502, not retried, and takes no backend down", async () => {
  const empty = await startFakeBackend({ emptyStreams: true });
  const other = await startFakeBackend({ emptyStreams: true });
  const router = await startTestRouter({ backends: `${empty.url},${other.url}` });
  try {
    const res = await chatAs(router, "empty-1", false);
    assert.equal(res.status, 502);
    await res.text();
    assert.equal(healthy(router, empty.url), true);
    assert.equal(healthy(router, other.url), true);
    const completions = (b: typeof empty) =>
      b.received.filter((r) => r.path === "/v1/chat/completions").length;
    assert.equal(completions(empty) + completions(other), 1, "sent once");
  } finally {
    await router.close();
    await empty.close();
    await other.close();
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
    // dies it cannot be tried again: the client reads an error event, and the backend leaves
    // placement all the same.
    await router.ticker.runOnce();
    assert.equal(healthy(router, dying.url), true);
    const streamedRes = chat("stream-1", true);
    await dying.held();
    const streamed = await streamedRes;
    assert.equal(streamed.status, 200);
    assert.equal(streamed.headers.get("x-maitred-backend"), dying.url);
    dying.release();
    assert.match(await streamed.text(), /"error"/);
    assert.equal(healthy(router, dying.url), false);
    const metrics = await (await fetch(`${router.url}/metrics`)).text();
    assert.match(metrics, /^maitred_upstream_retries_total 1$/m);
  } finally {
    await router.close();
    await dying.close();
    await good.close();
  }
});

test("a final request whose backend refuses it is retried as the same step: its program is released once, after the retry", async () => {
  const backends = [await startFakeBackend(), await startFakeBackend()];
  const router = await startTestRouter({ backends: backends.map((b) => b.url).join(",") });
  const send = (final: boolean) =>
    fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "m",
        program_id: "last-step",
        program_final: final,
        messages: [{ role: "user", content: "hi" }],
      }),
    });
  try {
    const first = await send(false);
    await first.text();
    const dead = backends.find((b) => b.url === first.headers.get("x-maitred-backend"));
    assert.ok(dead);
    await dead.close();
    const releases: number[] = [];
    const hook = router.nextEvent((e) => e.kind === "request_finished" && e.retrying === true);
    const last = await send(true);
    assert.equal(last.status, 200, await last.text());
    await hook;
    releases.push(router.loop.scheduler.snapshot().counters.releases);
    assert.deepEqual(releases, [1], "released once, by the retried final request");
    assert.equal(router.loop.scheduler.program("last-step"), undefined);
  } finally {
    await router.close();
    await backends[0].close().catch(() => {});
    await backends[1].close().catch(() => {});
  }
});
