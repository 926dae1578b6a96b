import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { startClosedLoop } from "../../src/bench/closed-loop.ts";
import type { StepClient, StepRequest, StepResponse } from "../../src/bench/step-client.ts";
import { chatPromptTokens } from "../../src/engine/chat-template.ts";
import { createVirtualClock, type VirtualClock } from "../../src/runtime/clock.ts";
import { scaleToolTimes } from "../../src/workload/tool-time-scale.ts";
import { markUnreleased } from "../../src/workload/unreleased.ts";
import { createWorkload } from "../../src/workload/workload.ts";

describe("closed-loop", () => {
  type Answer = (req: StepRequest, n: number) => StepResponse;

  /** A fake backend: answers synchronously, counts prompt tokens with the real template. */
  function fakeClient(answer?: Answer) {
    const sent: StepRequest[] = [];
    const released: string[] = [];
    const client: StepClient = {
      async send(req) {
        sent.push(req);
        if (answer) return answer(req, sent.length);
        return {
          ok: true,
          promptTokens: chatPromptTokens(req.messages, { addGenerationPrompt: true }).length,
          cachedTokens: 0,
          completionTokens: req.maxTokens,
          pausedMs: 0,
          text: undefined,
        };
      },
      async release(id) {
        released.push(id);
        return true;
      },
      async close() {},
    };
    return { client, sent, released };
  }

  /** A virtual clock: once the loop has nothing to do but wait, time jumps to its next wake-up. */
  const clocks: VirtualClock[] = [];
  function virtual(): VirtualClock {
    const clock = createVirtualClock();
    clocks.push(clock);
    return clock;
  }
  afterEach(() => {
    for (const c of clocks.splice(0)) c.stop();
  });

  // Programs end before a call past 8 k tokens: a few steps each, enough to check every one.
  const workload = createWorkload({
    kind: "preset",
    name: "search-agent",
    seed: 9,
    staggerMs: 10,
    maxContextTokens: 8000,
  });

  describe("closed-loop driver", () => {
    it("runs maxPrograms programs to completion, every step with its planned prompt size", async () => {
      const { client, sent, released } = fakeClient();
      const loop = startClosedLoop({
        workload,
        client,
        model: "m",
        concurrency: 3,
        maxPrograms: 5,
        programIdPrefix: "run1-",
        clock: virtual(),
      });
      const rec = await loop.done;
      const plans = Array.from({ length: 5 }, (_, i) => workload.programAt(i));
      const totalSteps = plans.reduce((s, p) => s + p.steps.length, 0);
      assert.equal(rec.programs.length, 5);
      assert.ok(rec.programs.every((p) => p.outcome === "completed"));
      assert.equal(rec.steps.length, totalSteps);
      assert.equal(sent.length, totalSteps);
      assert.deepEqual([...released].sort(), plans.map((p) => `run1-${p.programId}`).sort());
      for (const s of rec.steps) {
        const plan = plans.find((p) => `run1-${p.programId}` === s.programId)!;
        assert.equal(s.promptTokens, plan.steps[s.stepIndex].promptTokens);
        assert.equal(s.completionTokens, plan.steps[s.stepIndex].completionTokens);
      }
    });

    it("steps of one program go out in order with the program's id and max_tokens", async () => {
      const { client, sent } = fakeClient();
      await startClosedLoop({
        workload,
        client,
        model: "m",
        concurrency: 1,
        maxPrograms: 1,
        clock: virtual(),
      }).done;
      const plan = workload.programAt(0);
      assert.equal(sent.length, plan.steps.length);
      sent.forEach((req, i) => {
        assert.equal(req.programId, "p0");
        assert.equal(req.maxTokens, plan.steps[i].completionTokens);
        assert.equal(req.messages.length, 2 * (i + 1));
      });
    });

    it("tool time between steps is divided by the time scale", async () => {
      const { client } = fakeClient();
      const rec = await startClosedLoop({
        workload,
        client,
        model: "m",
        concurrency: 1,
        maxPrograms: 1,
        timeScale: 10,
        clock: virtual(),
      }).done;
      const plan = workload.programAt(0);
      const toolTotal = plan.steps.reduce((s, st) => s + st.toolMs, 0);
      assert.ok(
        Math.abs(rec.endMs - toolTotal / 10) < 1e-6,
        `end ${rec.endMs}, want ${toolTotal / 10}`,
      );
    });

    it("--tool-time-scale multiplies what --time-scale divides: tool time × 20 ÷ 5", async () => {
      const { client } = fakeClient();
      const rec = await startClosedLoop({
        workload: scaleToolTimes(workload, 20),
        client,
        model: "m",
        concurrency: 1,
        maxPrograms: 1,
        timeScale: 5,
        clock: virtual(),
      }).done;
      const plan = workload.programAt(0);
      const want = plan.steps.reduce((s, st) => s + Math.round(st.toolMs * 20), 0) / 5;
      assert.ok(want > 0, "the program has tool time, or the check is vacuous");
      assert.ok(Math.abs(rec.endMs - want) < 1e-6, `end ${rec.endMs}, want ${want}`);
    });

    it("a 503 is retried and the program still completes; each failed try is an error", async () => {
      const { client } = fakeClient((req, n) =>
        n === 2
          ? { ok: false, kind: "http_503", status: 503, retryAfterMs: 5 }
          : {
              ok: true,
              promptTokens: 1,
              cachedTokens: null,
              completionTokens: req.maxTokens,
              pausedMs: 7,
              text: undefined,
            },
      );
      const rec = await startClosedLoop({
        workload,
        client,
        model: "m",
        concurrency: 1,
        maxPrograms: 1,
        clock: virtual(),
      }).done;
      assert.equal(rec.programs[0].outcome, "completed");
      assert.deepEqual(
        rec.errors.map((e) => e.kind),
        ["http_503"],
      );
      assert.ok(rec.steps.every((s) => s.pausedMs === 7));
    });

    it("programs whose client never releases them (--unreleased) end without a release", async () => {
      const { client, released } = fakeClient();
      const half = markUnreleased(workload, 0.5);
      const loop = startClosedLoop({
        workload: half,
        client,
        model: "m",
        concurrency: 3,
        maxPrograms: 12,
        programIdPrefix: "run1-",
        clock: virtual(),
      });
      const rec = await loop.done;
      assert.ok(rec.programs.every((p) => p.outcome === "completed"));
      const plans = Array.from({ length: 12 }, (_, i) => half.programAt(i));
      const kept = plans.filter((p) => p.unreleased === true).map((p) => `run1-${p.programId}`);
      assert.ok(kept.length > 0 && kept.length < 12, `share 0.5 marked ${kept.length} of 12`);
      const expected = plans.filter((p) => p.unreleased !== true).map((p) => `run1-${p.programId}`);
      assert.deepEqual([...released].sort(), expected.sort());
    });

    it("a 400 fails the program at once, releases it, and the slot moves on", async () => {
      const { client, released } = fakeClient(() => ({
        ok: false,
        kind: "http_400",
        status: 400,
        retryAfterMs: null,
      }));
      const rec = await startClosedLoop({
        // Every program is one its client would leave unreleased at its end: a failed one is
        // still released (the client gave it up).
        workload: markUnreleased(workload, 1),
        client,
        model: "m",
        concurrency: 2,
        maxPrograms: 3,
        clock: virtual(),
      }).done;
      assert.equal(rec.programs.length, 3);
      assert.ok(rec.programs.every((p) => p.outcome === "failed"));
      assert.equal(rec.errors.length, 3);
      assert.equal(released.length, 3);
    });

    it("stop() ends the run: in-flight programs are unfinished and released", async () => {
      let stop: () => void = () => {};
      const { client, released } = fakeClient((req, n) => {
        if (n === 4) stop();
        return {
          ok: true,
          promptTokens: 1,
          cachedTokens: 0,
          completionTokens: req.maxTokens,
          pausedMs: 0,
          text: undefined,
        };
      });
      const loop = startClosedLoop({
        workload,
        client,
        model: "m",
        concurrency: 2,
        clock: virtual(),
      });
      stop = loop.stop;
      const rec = await loop.done;
      assert.ok(rec.programs.length >= 1 && rec.programs.length <= 2);
      assert.ok(rec.programs.every((p) => p.outcome === "unfinished"));
      assert.equal(released.length, rec.programs.length);
    });
  });
});
