import assert from "node:assert/strict";
import { test } from "node:test";
import { startKvSampler } from "../../src/bench/kv-sampler.ts";
import { createManualClock } from "../../src/runtime/clock.ts";
import { startFakeBackend } from "../integration/helpers/fake-backend.ts";

test("the KV sampler reads each backend's gauge once a second; a backend that does not answer is a gap, not zero", async () => {
  const up = await startFakeBackend();
  const down = await startFakeBackend();
  await down.close();
  const clock = createManualClock(0);
  const sampler = startKvSampler([up.url, down.url], clock);
  try {
    // Each sample waits on real sockets: let them answer, then move the clock a second.
    const series = await (async () => {
      for (let i = 1; i <= 2; i++) {
        while (clock.pendingTimers() === 0) await new Promise((r) => setImmediate(r));
        if (i < 2) clock.advance(1000);
      }
      return sampler.stop();
    })();
    assert.deepEqual(series.t_s, [0, 1]);
    assert.deepEqual(
      series.backends.map((b) => [b.id, b.kv_usage]),
      [
        [up.url, [0, 0]],
        [down.url, [null, null]],
      ],
    );
    assert.equal(clock.pendingTimers(), 0, "stopped: nothing left armed");
  } finally {
    await up.close();
  }
});
