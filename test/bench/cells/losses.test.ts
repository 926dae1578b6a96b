import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { byProgram } from "../../../src/bench/cells/cells-analysis.ts";
import {
  failureKinds,
  killLosses,
  phaseLosses,
  ringAgreement,
} from "../../../src/bench/cells/losses.ts";
import { runWindows } from "../../../src/bench/cells/windows.ts";
import { fixtureRun, RING } from "./fixture.ts";

const run = fixtureRun();
const index = byProgram(run.hapRequests);
const ringOf = (id: string) => RING.get(id);

describe("phaseLosses", () => {
  it("counts requests where sent, steps where answered, a loss where seen, retries where sent", () => {
    const rows = phaseLosses(run, runWindows(run).phases, run.hapRequests);
    assert.deepEqual(
      rows.map((r) => [r.name, r.lengthMs, r.sent, r.steps, r.cut, r.errorStatus, r.retries]),
      [
        ["warmup", 1000, 1, 1, 0, 0, 0],
        ["stable", 2000, 7, 5, 0, 0, 1],
        // The request cut at the kill was sent while stable and seen failing after the kill.
        ["dead", 2000, 4, 5, 1, 0, 0],
        ["back", 2000, 2, 2, 0, 0, 0],
        ["after the end", null, 0, null, 0, 0, 0],
      ],
    );
    assert.equal(rows[1].stepsPerMin, 150);
  });

  it("a hung request counts where it was sent, an error status apart from a cut", () => {
    const attempts = [
      { ...run.attempts[1], outcome: "hung" as const, endMs: null },
      { ...run.attempts[5], outcome: "failed" as const, kind: "http_503" },
    ];
    const rows = phaseLosses({ ...run, attempts }, runWindows(run).phases, []);
    assert.deepEqual(
      rows.map((r) => [r.name, r.hung, r.errorStatus]),
      [
        ["warmup", 0, 0],
        ["stable", 1, 1],
        ["dead", 0, 0],
        ["back", 0, 0],
        ["after the end", 0, 0],
      ],
    );
  });
});

describe("killLosses", () => {
  it("tells the failures of requests in flight on the victim from the others", () => {
    const k = killLosses(run, index, ringOf);
    assert.equal(k.failed.length, 1);
    assert.equal(k.lostAtKill.length, 1);
    assert.equal(k.lostElse.length, 0);
    assert.deepEqual(
      k.wereInFlight.map((x) => x.programId),
      ["cells-p1", "cells-p5"],
    );
    assert.equal(k.onVictim.length, 2);
    assert.deepEqual(
      k.savedByRetry.map((x) => x.programId),
      ["cells-p5"],
      "answered on cell-c after HAProxy's retry",
    );
    assert.equal(k.hung, 0);
  });

  it("a failure on another cell is not the kill's", () => {
    const attempts = [...run.attempts, { ...run.attempts[11], outcome: "failed" as const }];
    const k = killLosses({ ...run, attempts }, index, ringOf);
    assert.equal(k.lostAtKill.length, 1);
    assert.deepEqual(
      k.lostElse.map((x) => x.programId),
      ["cells-p3"],
    );
  });
});

describe("failureKinds and ringAgreement", () => {
  it("names each failure with its streaming and HAProxy's line for it", () => {
    assert.deepEqual(
      [...failureKinds(run.attempts, index)],
      [["transport_UND_ERR_SOCKET (stream, after its first token; HAProxy: cell-b 200 SD--)", 1]],
    );
  });

  it("checks the probed ring against the cell that answered each program before the kill", () => {
    const before = { from: 0, to: 3000 };
    assert.deepEqual(ringAgreement(index, before, ringOf), { agree: 5, seen: 5 });
    const wrong = (id: string) => (id === "cells-p0" ? "cell-c" : ringOf(id));
    assert.deepEqual(ringAgreement(index, before, wrong), { agree: 4, seen: 5 });
  });
});
