import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cellUp } from "../../src/bench/haproxy-process.ts";
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
} from "../../src/bench/soak-invariants.ts";
import {
  BACKEND_FAULTS,
  CELL_FAULT_KINDS,
  FAULT_KINDS,
  type FaultKind,
  faultSchedule,
} from "../../src/bench/soak-schedule.ts";

const lengths = Object.fromEntries(
  [...FAULT_KINDS, ...CELL_FAULT_KINDS].map((k) => [k, 10_000]),
) as Record<FaultKind, number>;
const schedule = (seed: number) =>
  faultSchedule({
    seed,
    durationMs: 20 * 60_000,
    warmupMs: 60_000,
    tailMs: 60_000,
    backends: 2,
    perKind: 3,
    lengthMs: lengths,
  });

describe("faultSchedule", () => {
  it("gives each kind its count, in order, without overlap, inside the window, seeded", () => {
    const s = schedule(7);
    assert.deepEqual(schedule(7), s, "the same seed gives the same schedule");
    assert.notDeepEqual(schedule(8), s, "another seed another");
    assert.equal(s.length, FAULT_KINDS.length * 3);
    for (const k of FAULT_KINDS) assert.equal(s.filter((f) => f.kind === k).length, 3, k);
    for (let i = 1; i < s.length; i++) {
      const prev = s[i - 1];
      assert.ok(prev.atMs + prev.lengthMs <= s[i].atMs, `fault ${i - 1} overlaps fault ${i}`);
    }
    assert.ok(s[0].atMs >= 60_000, "no fault in the warm-up");
    const last = s[s.length - 1];
    assert.ok(last.atMs + last.lengthMs <= 19 * 60_000, "no fault in the tail");
    for (const f of s) {
      assert.equal(f.backend !== null, BACKEND_FAULTS.has(f.kind), `${f.kind} backend`);
      if (f.backend !== null) assert.ok(f.backend === 0 || f.backend === 1);
    }
    const hit = new Set(s.map((f) => f.backend).filter((b) => b !== null));
    assert.equal(hit.size, 2, "every backend takes faults");
  });

  it("refuses faults too long for their slots, and a fleet of one", () => {
    assert.throws(
      () =>
        faultSchedule({
          seed: 1,
          durationMs: 60_000,
          warmupMs: 10_000,
          tailMs: 10_000,
          backends: 2,
          perKind: 3,
          lengthMs: lengths,
        }),
      /does not fit/,
    );
    assert.throws(
      () =>
        faultSchedule({
          seed: 1,
          durationMs: 20 * 60_000,
          warmupMs: 0,
          tailMs: 0,
          backends: 1,
          perKind: 1,
          lengthMs: lengths,
        }),
      /at least 2 backends/,
    );
  });
});

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

describe("cells", () => {
  const cellSchedule = (cells: number | undefined, seed = 3) =>
    faultSchedule({
      seed,
      durationMs: 20 * 60_000,
      warmupMs: 60_000,
      tailMs: 60_000,
      backends: 4,
      cells,
      perKind: 2,
      lengthMs: lengths,
    });

  it("kills cells in turn only with two cells or more; a lone router's schedule is unchanged", () => {
    const s = cellSchedule(2);
    const kills = s.filter((f) => f.kind === "kill-cell");
    assert.deepEqual(kills.map((f) => f.cell).sort(), [0, 1], "each cell killed once in two kills");
    for (const f of s) {
      assert.equal(f.cell !== null, f.kind === "kill-cell", `${f.kind} names a cell`);
      if (f.kind === "kill-cell") assert.equal(f.backend, null);
    }
    const backendsHit = new Set(s.map((f) => f.backend).filter((b) => b !== null));
    assert.deepEqual(
      [...backendsHit].sort(),
      [0, 1, 2, 3],
      "faults go round every cell's backends",
    );
    for (const cells of [undefined, 0, 1]) {
      const lone = cellSchedule(cells);
      assert.ok(!lone.some((f) => f.kind === "kill-cell"), `no cell killed with cells=${cells}`);
      assert.deepEqual(lone, cellSchedule(undefined), `cells=${cells} gives the lone schedule`);
    }
  });

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

  it("reads a cell as UP from HAProxy's metrics only with its last check passed", () => {
    const up = 'haproxy_server_status{proxy="cells_by_program",server="cell-a",state="UP"} 1';
    const ok =
      'haproxy_server_check_status{proxy="cells_by_program",server="cell-a",state="L7OK"} 1';
    const failed =
      'haproxy_server_check_status{proxy="cells_by_program",server="cell-a",state="L4CON"} 1';
    assert.ok(cellUp(`${up}\n${ok}\n`, "cell-a"));
    assert.ok(!cellUp(`${up}\n${failed}\n`, "cell-a"), "UP but its check failing");
    assert.ok(!cellUp(`${up}\n${ok}\n`, "cell-b"));
    assert.ok(
      !cellUp(`${up.replace("cells_by_program", "cells_any")}\n${ok}`, "cell-a"),
      "other proxy",
    );
  });
});
