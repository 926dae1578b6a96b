import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createManualClock, type ManualClock } from "../../src/sim-server/clock.ts";
import {
  DEFAULT_SLOW_DELAY_S,
  GARBAGE_BODY,
  METRICS_FAULT_PATH,
} from "../../src/sim-server/metrics-fault.ts";
import type { SimBackend } from "../../src/sim-server/start-sim-backend.ts";
import { startTestBackend } from "./helpers.ts";

/** The backend's app on a manual clock, asked in-process (no socket, no waiting on time). */
async function withBackend(fn: (b: SimBackend, clock: ManualClock) => Promise<void>) {
  const clock = createManualClock(1_000_000);
  const backend = await startTestBackend({ clock });
  try {
    await fn(backend, clock);
  } finally {
    await backend.close();
  }
}

const control = (b: SimBackend, body: unknown) =>
  b.app.request(METRICS_FAULT_PATH, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
const metrics = (b: SimBackend) => b.app.request("/metrics");

describe("POST /sim/metrics-fault", () => {
  it("garbage answers a 200 that is not the exposition, until its seconds have passed", async () => {
    await withBackend(async (b, clock) => {
      const set = await control(b, { mode: "garbage", seconds: 30 });
      assert.equal(set.status, 200);
      assert.deepEqual(await set.json(), {
        mode: "garbage",
        seconds_left: 30,
        delay_seconds: null,
      });
      const bad = await metrics(b);
      assert.equal(bad.status, 200);
      assert.equal(await bad.text(), GARBAGE_BODY);
      clock.advance(29_999);
      assert.equal(await (await metrics(b)).text(), GARBAGE_BODY, "still within the window");
      clock.advance(1);
      const good = await (await metrics(b)).text();
      assert.match(good, /^# HELP vllm:/m, "the exposition is back once the window ended");
    });
  });

  it("error answers 500 in the OpenAI envelope, and ok ends it at once", async () => {
    await withBackend(async (b) => {
      await control(b, { mode: "error" });
      const res = await metrics(b);
      assert.equal(res.status, 500);
      const body = (await res.json()) as { error: Record<string, unknown> };
      assert.deepEqual(Object.keys(body.error), ["message", "type", "param", "code"]);
      assert.equal((await metrics(b)).status, 500, "no seconds: until changed");
      const ok = await control(b, { mode: "ok" });
      assert.deepEqual(await ok.json(), { mode: "ok", seconds_left: null, delay_seconds: null });
      assert.equal((await metrics(b)).status, 200);
    });
  });

  it("slow sends the head and half the body at once, the rest after its delay", async () => {
    await withBackend(async (b, clock) => {
      await control(b, { mode: "slow", seconds: 60 });
      const res = await metrics(b);
      assert.equal(res.status, 200, "the head comes at once");
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const first = await reader.read();
      assert.ok(
        first.value !== undefined && first.value.length > 0,
        "the first half comes at once",
      );
      const rest = reader.read();
      let done = false;
      void rest.then(() => {
        done = true;
      });
      clock.advance(DEFAULT_SLOW_DELAY_S * 1000 - 1);
      await Promise.resolve();
      assert.equal(done, false, "the second half must wait for the delay");
      clock.advance(1);
      const second = await rest;
      assert.ok(second.value !== undefined && second.value.length > 0);
      const text = new TextDecoder().decode(
        new Uint8Array([...(first.value as Uint8Array), ...(second.value as Uint8Array)]),
      );
      assert.match(text, /vllm:kv_cache_usage_perc/, "the whole exposition, only late");
      assert.equal((await reader.read()).done, true);
    });
  });

  it("refuses a bad control with 400 in the envelope, naming the field, and keeps the fault in force", async () => {
    await withBackend(async (b) => {
      await control(b, { mode: "error" });
      const cases: [unknown, string | null][] = [
        ["{not json", null],
        [[1, 2], null],
        [{ mode: "broken" }, "mode"],
        [{}, "mode"],
        [{ mode: "garbage", seconds: -1 }, "seconds"],
        [{ mode: "garbage", seconds: "10" }, "seconds"],
        [{ mode: "garbage", seconds: 1e9 }, "seconds"],
        [{ mode: "slow", delay_seconds: 0 }, "delay_seconds"],
        [{ mode: "ok", extra: 1 }, "extra"],
      ];
      for (const [body, param] of cases) {
        const res = await control(b, body);
        assert.equal(res.status, 400, `got ${res.status} for ${JSON.stringify(body)}, want 400`);
        const env = (await res.json()) as { error: { param: string | null; message: string } };
        assert.equal(env.error.param, param, `param for ${JSON.stringify(body)}`);
      }
      assert.equal((await metrics(b)).status, 500, "a refused control changes nothing");
    });
  });
});
