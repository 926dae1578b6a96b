import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { StepClient, StepRequest } from "../../src/bench/step-client.ts";
import { programIndex, subsequence, traceClient } from "../../src/bench/trace-client.ts";
import { createManualClock } from "../../src/runtime/clock.ts";
import type { Workload } from "../../src/workload/types.ts";

/** A client that answers each request when the test says, recording what it was sent. */
function fakeClient() {
  const sent: StepRequest[] = [];
  const pending: ((ok: boolean) => void)[] = [];
  const client: StepClient = {
    send(req: StepRequest) {
      sent.push(req);
      return new Promise((resolve) =>
        pending.push((ok) =>
          resolve(
            ok
              ? { ok: true, promptTokens: 1, cachedTokens: 0, completionTokens: 1, pausedMs: 7 }
              : { ok: false, kind: "http_503", retryAfterMs: null },
          ),
        ),
      );
    },
    release: async () => true,
    close: async () => {},
  } as unknown as StepClient;
  return { client, sent, answer: (k: number, ok = true) => pending[k](ok) };
}

const request = (programId: string) => ({ programId }) as unknown as StepRequest;

describe("the traced client", () => {
  it("decides streaming by the program and keeps every attempt with its times and outcome", async () => {
    const clock = createManualClock(1_000);
    const inner = fakeClient();
    const t = traceClient(inner.client, 0, (id) => id.endsWith("p2"), clock);
    const signal = new AbortController().signal;
    const a = t.client.send(request("cells-p1"), signal);
    const b = t.client.send(request("cells-p2"), signal);
    assert.deepEqual(
      inner.sent.map((r) => r.stream),
      [false, true],
    );
    clock.advance(250);
    inner.answer(0);
    inner.answer(1, false);
    await Promise.all([a, b]);
    const [x, y] = t.attempts;
    assert.equal(x.startMs, 1_000);
    assert.equal(x.endMs, 1_250);
    assert.equal(x.outcome, "ok");
    assert.equal(x.pausedMs, 7);
    assert.equal(y.outcome, "failed");
    assert.equal(y.kind, "http_503");
    assert.equal(y.afterStop, false);
  });
});

describe("a lone router's workload", () => {
  it("takes the programs at the given indices, in order, and says which cell ran out", () => {
    const base = {
      name: "w",
      seed: 1,
      sharedPrefixTokens: 0,
      size: 10,
      programAt: (k: number) => ({ index: k }),
    } as unknown as Workload;
    const sub = subsequence(base, [4, 2], "cell-a");
    assert.deepEqual(sub.programAt(1), { index: 2 });
    assert.throws(() => sub.programAt(2), /cell-a: ran out of probed program ids \(2\)/);
    assert.equal(programIndex("cells-p17"), 17);
    assert.equal(programIndex("other"), 0);
  });
});
