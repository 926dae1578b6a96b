import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  accessCounts,
  CHAT_PATH,
  countedClient,
  createAccessTally,
  createLedger,
  RELEASE_PATH,
  tallyAccessLine,
} from "../../../src/bench/soak/ledger.ts";
import type { StepClient, StepRequest, StepResponse } from "../../../src/bench/step-client.ts";

const ok: StepResponse = {
  ok: true,
  promptTokens: 1,
  cachedTokens: null,
  completionTokens: 1,
  pausedMs: 0,
  text: "",
};
const failed: StepResponse = { ok: false, kind: "http_503", status: 503, retryAfterMs: null };

/** A client whose answers are given in turn: a response, an error to throw, a release's answer. */
function scripted(answers: (StepResponse | Error)[], released: boolean[]): StepClient {
  return {
    async send() {
      const a = answers.shift();
      if (a === undefined || a instanceof Error) throw a ?? new Error("no answer left");
      return a;
    },
    release: async () => released.shift() ?? true,
    close: async () => {},
  };
}

const request: StepRequest = { programId: "p", model: "m", messages: [], maxTokens: 1 };
const signal = new AbortController().signal;

describe("the soak's count of what it sent", () => {
  it("counts every chat request, a failed one at its moment, one that threw as given up", async () => {
    const ledger = createLedger();
    const c = countedClient(scripted([ok, failed, new Error("aborted")], []), ledger, () => 42);
    await c.send(request, signal);
    await c.send(request, signal);
    await assert.rejects(c.send(request, signal), /aborted/);
    assert.equal(ledger.sent.get(CHAT_PATH), 3);
    assert.equal(ledger.gaveUp.get(CHAT_PATH), 1);
    assert.deepEqual(ledger.clientFailures, [{ path: CHAT_PATH, atMs: 42 }]);
  });

  it("counts a release lost on the wire as given up, and an answered one not", async () => {
    const ledger = createLedger();
    const c = countedClient(scripted([], [true, false]), ledger);
    assert.equal(await c.release("a"), true);
    assert.equal(await c.release("b"), false);
    assert.equal(ledger.sent.get(RELEASE_PATH), 2);
    assert.equal(ledger.gaveUp.get(RELEASE_PATH), 1);
  });
});

const accessLine = (over: Record<string, unknown>) =>
  JSON.stringify({
    time: 1_000,
    msg: "request",
    path: CHAT_PATH,
    status: 200,
    backend: "http://b1",
    durationMs: 5,
    error: null,
    heldMs: null,
    ...over,
  });

describe("the access log's tally", () => {
  it("counts access lines by path and keeps the failures and the long holds, nothing else", () => {
    const t = createAccessTally();
    tallyAccessLine(t, accessLine({}), 300_000);
    tallyAccessLine(t, accessLine({ status: 502 }), 300_000);
    tallyAccessLine(t, accessLine({ status: 499, error: "client_closed" }), 300_000);
    tallyAccessLine(t, accessLine({ heldMs: 300_001 }), 300_000);
    tallyAccessLine(t, accessLine({ path: RELEASE_PATH, heldMs: 300_000 }), 300_000);
    tallyAccessLine(t, '{"msg":"maitred listening","url":"http://x"}', 300_000);
    tallyAccessLine(t, "not json", 300_000);
    assert.deepEqual(
      [...t.byPath],
      [
        [CHAT_PATH, 4],
        [RELEASE_PATH, 1],
      ],
    );
    assert.deepEqual(
      t.failed.map((l) => l.status),
      [502],
    );
    assert.deepEqual(
      t.held.map((l) => l.heldMs),
      [300_001],
    );
  });

  it("holds each path sent against its lines: HAProxy's retries on its paths, cell losses", () => {
    const ledger = createLedger();
    for (const p of [CHAT_PATH, CHAT_PATH, "/programs", RELEASE_PATH]) ledger.count(p);
    ledger.unanswered(CHAT_PATH);
    ledger.clientFailures.push({ path: CHAT_PATH, atMs: 150 }, { path: CHAT_PATH, atMs: 900 });
    const t = createAccessTally();
    tallyAccessLine(t, accessLine({}), 1);
    tallyAccessLine(t, accessLine({ path: "/programs" }), 1);
    const cellKills = [{ id: 0, kind: "kill-cell", startMs: 100, endMs: 200, backend: null }];
    const o = { retried: 5, behindHaproxy: true, cellKills, graceMs: 50 };
    assert.deepEqual(accessCounts(ledger, t, o), [
      { path: CHAT_PATH, sent: 2, gaveUp: 1, lines: 1, retried: 5, lostWithCell: 1 },
      { path: "/programs", sent: 1, gaveUp: 0, lines: 1, retried: 0, lostWithCell: 0 },
      { path: RELEASE_PATH, sent: 1, gaveUp: 0, lines: 0, retried: 5, lostWithCell: 0 },
    ]);
    const alone = accessCounts(ledger, t, { ...o, behindHaproxy: false });
    assert.deepEqual(
      alone.map((c) => c.retried),
      [0, 0, 0],
      "no HAProxy, no retries",
    );
  });
});
