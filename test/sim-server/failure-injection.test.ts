import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MaitredError } from "../../src/errors.ts";
import { createFailureInjector } from "../../src/sim-server/failure-injection.ts";
import type { SimBackend } from "../../src/sim-server/start-sim-backend.ts";
import { postJson, readJson, sseData, startTestBackend, userMessages } from "./helpers.ts";

const none = new Headers();

describe("createFailureInjector", () => {
  it("draws the same failures from the same seed and different ones from another seed", () => {
    const draw = (seed: number) => {
      const inj = createFailureInjector({
        rate: 0.5,
        codes: [500, 503],
        streamErrorAfter: null,
        seed,
      });
      return Array.from({ length: 40 }, () => inj.plan(none).status);
    };
    const a = draw(7);
    assert.deepEqual(draw(7), a);
    assert.notDeepEqual(draw(8), a);
    const failed = a.filter((s) => s !== null);
    assert.ok(failed.length > 5 && failed.length < 35, `rate 0.5 failed ${failed.length}/40`);
    assert.ok(failed.every((s) => s === 500 || s === 503));
    assert.ok(failed.includes(500) && failed.includes(503), "both codes should be drawn");
  });

  it("never fails at rate 0 and always fails at rate 1", () => {
    const off = createFailureInjector({ rate: 0, codes: [500], streamErrorAfter: null, seed: 1 });
    const on = createFailureInjector({ rate: 1, codes: [429], streamErrorAfter: null, seed: 1 });
    for (let i = 0; i < 20; i++) {
      assert.equal(off.plan(none).status, null);
      assert.equal(on.plan(none).status, 429);
    }
  });

  it("takes the status and the stream-error point from headers, over the flags", () => {
    const inj = createFailureInjector({ rate: 0, codes: [500], streamErrorAfter: 9, seed: 1 });
    assert.deepEqual(inj.plan(new Headers({ "x-sim-return-error": "503" })), {
      status: 503,
      streamErrorAfter: 9,
    });
    assert.equal(inj.plan(new Headers({ "x-sim-stream-error-after": "2" })).streamErrorAfter, 2);
  });

  it("rejects a malformed control header with a 400", () => {
    const inj = createFailureInjector({ rate: 0, codes: [500], streamErrorAfter: null, seed: 1 });
    for (const value of ["abc", "200", "700", "5.5"]) {
      assert.throws(
        () => inj.plan(new Headers({ "x-sim-return-error": value })),
        (err) => err instanceof MaitredError && err.status === 400,
        `header value ${value}`,
      );
    }
  });
});

describe("failure injection over HTTP", () => {
  const chat = (backend: SimBackend, body: object, headers: Record<string, string> = {}) =>
    postJson(
      `${backend.url}/v1/chat/completions`,
      { messages: userMessages("fail?"), ...body },
      { headers },
    );

  it("x-sim-return-error answers that status with the OpenAI envelope", async () => {
    const backend = await startTestBackend();
    try {
      const res = await chat(backend, { max_tokens: 1 }, { "x-sim-return-error": "503" });
      assert.equal(res.status, 503);
      const body = await readJson(res);
      assert.equal(body.error.code, 503);
      assert.equal(body.error.type, "ServiceUnavailableError");
    } finally {
      await backend.close();
    }
  });

  it("--failure-rate with a seed fails the same requests on every run", async () => {
    const run = async () => {
      const backend = await startTestBackend({
        failureRate: 0.5,
        failureCodes: "500,429",
        seed: 3,
      });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 12; i++) statuses.push((await chat(backend, { max_tokens: 1 })).status);
        return statuses;
      } finally {
        await backend.close();
      }
    };
    const first = await run();
    assert.deepEqual(await run(), first);
    assert.ok(first.includes(200), `some requests must succeed, got ${first}`);
    assert.ok(
      first.some((s) => s === 500 || s === 429),
      `some requests must fail, got ${first}`,
    );
  });

  it("a mid-stream error after n tokens arrives as one error event followed by [DONE]", async () => {
    const backend = await startTestBackend();
    try {
      const res = await chat(
        backend,
        { max_tokens: 50, ignore_eos: true, stream: true },
        { "x-sim-stream-error-after": "3" },
      );
      assert.equal(res.status, 200);
      const events = sseData(await res.text());
      assert.equal(events.length, 1 + 3 + 1 + 1, `events: ${events.join(" | ")}`);
      const error = JSON.parse(events[4]);
      assert.deepEqual(Object.keys(error.error), ["message", "type", "param", "code"]);
      assert.equal(error.error.code, 500);
      assert.equal(events[5], "[DONE]");
      const stats = backend.engine.stats();
      assert.equal(
        stats.numRunning + stats.numWaiting,
        0,
        "the failed request must leave the engine",
      );
    } finally {
      await backend.close();
    }
  });
});
