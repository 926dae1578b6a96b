import assert from "node:assert/strict";
import { test } from "node:test";
import type { SchedulerEvent } from "../../src/core/events.ts";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

type Tick = Extract<SchedulerEvent, { kind: "tick" }>;
const isTick = (e: SchedulerEvent): e is Tick => e.kind === "tick";

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
