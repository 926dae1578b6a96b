import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type {
  Engine,
  EngineRequest,
  EngineStats,
  RequestOutput,
  StepResult,
} from "../../src/engine/types.ts";
import { createManualClock, type ManualClock } from "../../src/runtime/clock.ts";
import { createEngineDriver, type DriverEvent } from "../../src/sim-server/engine-driver.ts";

const STEP_S = 0.01;

/** One token per request per step, each step STEP_S engine seconds; records every call. */
function fakeEngine() {
  const live = new Map<string, { req: EngineRequest; made: number }>();
  const calls: string[] = [];
  const engine: Engine = {
    config: {} as Engine["config"],
    add(req) {
      calls.push(`add ${req.id}@${req.arrivalTime}`);
      live.set(req.id, { req, made: 0 });
    },
    abort(id, now) {
      calls.push(`abort ${id}@${now}`);
      return live.delete(id);
    },
    step(now): StepResult | null {
      calls.push(`step@${now}`);
      if (live.size === 0) return null;
      const outputs: RequestOutput[] = [];
      for (const [id, r] of live) {
        r.made++;
        const done = r.made >= r.req.maxTokens;
        if (done) live.delete(id);
        outputs.push({
          id,
          newTokenIds: [r.made],
          finishReason: done ? "length" : undefined,
          numCachedTokens: 0,
          numLoadedTokens: 0,
          promptTokens: r.req.promptTokens.length,
          completionTokens: r.made,
        });
      }
      return {
        startTime: now,
        duration: STEP_S,
        scheduledTokens: outputs.length,
        numRunning: live.size,
        outputs,
      };
    },
    hasWork: () => live.size > 0,
    stats: () => ({}) as EngineStats,
  };
  return { engine, calls, live };
}

const request = (id: string, maxTokens: number) => ({
  id,
  promptTokens: [1, 2, 3],
  maxTokens,
  minTokens: 0,
  ignoreEos: true,
});

describe("createEngineDriver", () => {
  it("holds each step's outputs for duration / timeScale real ms, then steps again", () => {
    const clock = createManualClock();
    const { engine } = fakeEngine();
    const driver = createEngineDriver({ engine, clock, timeScale: 2 });
    const got: Array<[number, number]> = [];
    driver.submit(request("a", 2), { onOutput: (o, t) => got.push([o.newTokenIds[0], t]) });
    clock.flush(); // first step starts
    clock.advance(4.9); // 0.01 s engine / 2 = 5 ms real: not yet
    assert.deepEqual(got, [], "outputs must not be visible before duration/S real ms");
    clock.advance(0.1);
    assert.deepEqual(got, [[1, STEP_S]]);
    clock.flush(); // next step starts on the next turn
    clock.advance(5);
    assert.deepEqual(got, [
      [1, STEP_S],
      [2, 2 * STEP_S],
    ]);
  });

  it("goes idle without timers when the engine has no work", () => {
    const clock = createManualClock();
    const { engine } = fakeEngine();
    const driver = createEngineDriver({ engine, clock, timeScale: 1 });
    const events: DriverEvent["kind"][] = [];
    driver.onEvent((e) => events.push(e.kind));
    driver.submit(request("a", 1), { onOutput: () => {} });
    clock.flush();
    clock.advance(10);
    clock.flush();
    assert.deepEqual(events, ["step", "idle"]);
    assert.equal(clock.pendingTimers(), 0, "an idle driver must not keep timers");
  });

  it("applies an abort requested mid-step at that step's end and drops its outputs", () => {
    const clock = createManualClock();
    const { engine, calls } = fakeEngine();
    const driver = createEngineDriver({ engine, clock, timeScale: 1 });
    const got: string[] = [];
    driver.submit(request("a", 5), { onOutput: (o) => got.push(`a${o.newTokenIds[0]}`) });
    driver.submit(request("b", 5), { onOutput: (o) => got.push(`b${o.newTokenIds[0]}`) });
    clock.flush();
    driver.abort("a"); // the step is in flight
    assert.ok(
      !calls.some((c) => c.startsWith("abort")),
      "engine.abort must wait for the step boundary",
    );
    clock.advance(10);
    assert.deepEqual(got, ["b1"], "an aborted request's outputs must not be delivered");
    assert.ok(calls.includes(`abort a@${STEP_S}`), `got calls ${calls.join(", ")}`);
  });

  it("aborts at once when no step is in flight", () => {
    const clock = createManualClock();
    const { engine, calls } = fakeEngine();
    const driver = createEngineDriver({ engine, clock, timeScale: 1 });
    driver.submit(request("a", 5), { onOutput: () => {} });
    driver.abort("a");
    assert.ok(calls.includes("abort a@0"));
  });

  it("stamps arrivals on the scaled clock and never runs engine time backwards", () => {
    const clock = createManualClock(1000);
    const { engine, calls } = fakeEngine();
    const driver = createEngineDriver({ engine, clock, timeScale: 10 });
    clock.advance(100); // 100 ms real = 1 s engine
    assert.equal(driver.submit(request("a", 1), { onOutput: () => {} }), 1);
    clock.flush();
    clock.advance(1); // step end = 1.01 s, delivered at 1.01 s scaled
    assert.ok(
      driver.now() >= 1 + STEP_S,
      `engine time ${driver.now()} went behind the last step end`,
    );
    assert.deepEqual(calls.slice(0, 2), ["add a@1", "step@1"]);
  });
});

/** A manual clock with Node's timer floor: a delay under 1 ms runs at once, as setImmediate does. */
function nodeLikeClock(): ManualClock {
  const clock = createManualClock();
  return { ...clock, setTimeout: (fn, ms) => clock.setTimeout(fn, ms < 1 ? 0 : ms) };
}

describe("engine time keeps to real time at every time scale", () => {
  for (const timeScale of [1, 5, 20, 50]) {
    it(`time scale ${timeScale}: a decode keeps the profile's rate in real time`, () => {
      const clock = nodeLikeClock();
      const { engine } = fakeEngine();
      const driver = createEngineDriver({ engine, clock, timeScale });
      let tokens = 0;
      driver.submit(request("a", 1_000_000), { onOutput: () => tokens++ });
      const wallMs = 2000;
      for (let t = 0; t < wallMs; t += 0.25) clock.advance(0.25); // the event loop's turns
      const engineS = (wallMs / 1000) * timeScale;
      const expected = engineS / STEP_S; // one token per STEP_S engine seconds
      assert.ok(
        Math.abs(tokens - expected) <= Math.max(2, 0.02 * expected),
        `${tokens} tokens in ${wallMs} ms of real time, the profile says ${expected}`,
      );
      assert.ok(driver.now() - engineS <= (timeScale * 1) / 1000 + STEP_S, "engine time ran ahead");
      driver.close();
    });
  }
});
