import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type AccessLine,
  accessLogViolation,
  attributeFailures,
  bookDrift,
  createInvariantChecker,
  drainedViolations,
  heldTooLong,
  inAnyWindow,
  type ProgramSample,
  parseAccessLine,
} from "../../../src/bench/soak/invariants.ts";

const limits = { maxRequestMs: 10_000, maxPauseMs: 300_000, slackMs: 2_000 };
const prog = (key: string, over: Partial<ProgramSample> = {}): ProgramSample => ({
  key,
  status: "acting",
  state: "active",
  inFlight: 0,
  pausedSince: null,
  ...over,
});

describe("createInvariantChecker", () => {
  it("reports a program reasoning with nothing in flight only past the bound, once", () => {
    const c = createInvariantChecker(limits);
    const idle = prog("a", { status: "reasoning" });
    const busy = prog("b", { status: "reasoning", inFlight: 1 });
    assert.deepEqual(c.observe({ atMs: 0, programs: [idle, busy], usedTokens: {} }), []);
    assert.deepEqual(c.observe({ atMs: 12_000, programs: [idle, busy], usedTokens: {} }), []);
    const v = c.observe({ atMs: 12_001, programs: [idle, busy], usedTokens: {} });
    assert.equal(v.length, 1);
    assert.equal(v[0].invariant, "reasoning-without-request");
    assert.match(v[0].detail, /program a/);
    assert.deepEqual(c.observe({ atMs: 20_000, programs: [idle], usedTokens: {} }), [], "once");
  });

  it("restarts the clock when the program was seen with a request in between", () => {
    const c = createInvariantChecker(limits);
    c.observe({ atMs: 0, programs: [prog("a", { status: "reasoning" })], usedTokens: {} });
    c.observe({
      atMs: 5_000,
      programs: [prog("a", { status: "reasoning", inFlight: 1 })],
      usedTokens: {},
    });
    const v = c.observe({
      atMs: 13_000,
      programs: [prog("a", { status: "reasoning" })],
      usedTokens: {},
    });
    assert.deepEqual(v, [], "idle since 13 s, not since 0");
  });

  it("reports a held request past the max pause, and negative books at once", () => {
    const c = createInvariantChecker(limits);
    const held = prog("h", { state: "paused", inFlight: 1, pausedSince: 1_000 });
    const pausedIdle = prog("i", { state: "paused", inFlight: 0, pausedSince: 0 });
    assert.deepEqual(
      c.observe({ atMs: 303_000, programs: [held, pausedIdle], usedTokens: { u: 0 } }),
      [],
    );
    const v = c.observe({ atMs: 303_001, programs: [held, pausedIdle], usedTokens: { u: -5 } });
    assert.deepEqual(
      v.map((x) => x.invariant),
      ["held-past-max-pause", "books"],
    );
    const again = c.observe({ atMs: 304_000, programs: [], usedTokens: { u: -5, w: -2 } });
    assert.equal(again.length, 1, "each backend's negative books are reported once");
    assert.match(again[0].detail, /backend w used_tokens -2/);
  });
});

describe("end checks", () => {
  it("a drained fleet has no program and no token booked", () => {
    assert.deepEqual(drainedViolations({ atMs: 0, programs: [], usedTokens: { u: 0 } }), []);
    const v = drainedViolations({
      atMs: 0,
      programs: [prog("x", { state: "paused" }), prog("y", { state: "paused" })],
      usedTokens: { u: 12 },
    });
    assert.deepEqual(
      v.map((x) => x.invariant),
      ["programs-left", "books"],
    );
    assert.match(v[0].detail, /2 acting\/paused/);
  });

  it("takes a rounding residue in the books for zero, and says how large it was", () => {
    const s = { atMs: 0, programs: [], usedTokens: { u: 5.8e-11, w: -7e-12 } };
    assert.deepEqual(drainedViolations(s), []);
    assert.deepEqual(createInvariantChecker(limits).observe(s), []);
    assert.equal(bookDrift(s), 5.8e-11);
    assert.equal(
      drainedViolations({ ...s, usedTokens: { u: 0.5 } }).length,
      1,
      "half a token is not rounding",
    );
  });

  const line = (over: Partial<AccessLine>): AccessLine => ({
    endMs: 10_000,
    durationMs: 100,
    path: "/v1/chat/completions",
    status: 200,
    backend: "http://b1",
    error: null,
    heldMs: 0,
    ...over,
  });

  it("attributes a failure to the fault on its backend whose window it overlapped", () => {
    const faults = [
      { id: 0, kind: "kill", startMs: 9_000, endMs: 9_500, backend: "http://b1" },
      { id: 1, kind: "stop", startMs: 20_000, endMs: 25_000, backend: "http://b2" },
    ];
    const lines = [
      line({ status: 502 }), // on b1 during kill (within grace)
      line({ status: 200, error: "backend_incomplete" }), // a cut stream
      line({ status: 499, error: "client_closed" }), // the client's own act
      line({ status: 200, error: "client_closed", backend: null }), // left while held
      line({ status: 503, backend: null, endMs: 21_000 }), // ran nowhere, during the stop
      line({ status: 502, backend: "http://b2", endMs: 10_000 }), // b2, no fault there then
      line({ status: 200 }),
    ];
    const a = attributeFailures(lines, faults, 1_000);
    assert.deepEqual(
      [...a.explained],
      [
        [0, 2],
        [1, 1],
      ],
    );
    assert.equal(a.unexplained.length, 1);
    assert.equal(a.unexplained[0].backend, "http://b2");
  });

  it("reads access log lines and flags holds past the max pause", () => {
    const text = JSON.stringify({
      level: "info",
      time: "2026-11-27T14:04:48.757Z",
      path: "/v1/chat/completions",
      status: 200,
      backend: "http://b1",
      heldMs: 302_500,
      durationMs: 302_600,
      error: null,
      msg: "request",
    });
    const l = parseAccessLine(text);
    assert.ok(l !== null);
    assert.equal(l.endMs, Date.parse("2026-11-27T14:04:48.757Z"));
    assert.equal(parseAccessLine('{"msg":"maitred listening"}'), null);
    assert.equal(parseAccessLine("not json"), null);
    assert.equal(heldTooLong([l], limits).length, 1);
    assert.equal(heldTooLong([l], { ...limits, slackMs: 3_000 }).length, 0);
  });
});

describe("the access log and the fault windows", () => {
  it("counts access log lines within retries above and cell losses below the requests sent", () => {
    const base = {
      path: "/v1/chat/completions",
      sent: 100,
      gaveUp: 2,
      lines: 100,
      retried: 0,
      lostWithCell: 0,
    };
    assert.equal(accessLogViolation(base, 0), null);
    assert.equal(accessLogViolation({ ...base, lines: 98 }, 0), null, "two given up");
    assert.equal(accessLogViolation({ ...base, lines: 97 }, 0)?.invariant, "access-log");
    assert.equal(accessLogViolation({ ...base, lines: 101 }, 0)?.invariant, "access-log");
    assert.equal(accessLogViolation({ ...base, lines: 103, retried: 3 }, 0), null);
    assert.equal(
      accessLogViolation({ ...base, lines: 104, retried: 3 }, 0)?.invariant,
      "access-log",
    );
    assert.equal(accessLogViolation({ ...base, lines: 95, lostWithCell: 3 }, 0), null);
    const v = accessLogViolation({ ...base, lines: 94, lostWithCell: 3 }, 7);
    assert.equal(v?.atMs, 7);
    assert.match(v?.detail ?? "", /3 failed while a cell was killed/);
  });

  it("places a moment in a window stretched by the grace after its end", () => {
    const ws = [{ startMs: 100, endMs: 200 }];
    assert.ok(inAnyWindow(100, ws, 0));
    assert.ok(inAnyWindow(250, ws, 50));
    assert.ok(!inAnyWindow(251, ws, 50));
    assert.ok(!inAnyWindow(99, ws, 50));
  });
});
