import assert from "node:assert/strict";
import { test } from "node:test";
import { smallestFirstVictims } from "../../src/core/pause-victims.ts";
import { bestFit, worstFit } from "../../src/core/placement.ts";
import type { ProgramRecord } from "../../src/core/records.ts";
import { groupThenSmallest } from "../../src/core/resume-order.ts";
import { createProgramRecord } from "../../src/core/scheduler-state.ts";
import { createTokenEstimator } from "../../src/core/token-estimator.ts";

let seq = 0;
function program(id: string, tokens: number, status: "REASONING" | "ACTING"): ProgramRecord {
  const p = createProgramRecord(id, ++seq, null, 0);
  p.tokens = tokens;
  p.status = status;
  return p;
}

test("bestFit picks the least room that fits; worstFit the most; both -1 when none fits", () => {
  const rooms = [500, null, 300, 1000, 240];
  assert.equal(bestFit(rooms, 250), 2);
  assert.equal(worstFit(rooms, 250), 3);
  assert.equal(bestFit(rooms, 2000), -1);
  assert.equal(worstFit([null, null], 1), -1);
});

test("victims: acting smallest first until the overflow is covered, reasoning untouched", () => {
  const ps = [
    program("a", 300, "ACTING"),
    program("b", 100, "ACTING"),
    program("r", 50, "REASONING"),
  ];
  const v = smallestFirstVictims({
    programs: ps,
    overflow: 250,
    actingTokenWeight: 1,
    bufferPerProgram: 100,
  });
  assert.deepEqual(
    v.pause.map((p) => p.id),
    ["b", "a"],
  );
  assert.deepEqual(v.mark, []);
});

test("victims: marks count toward the overflow, so only as many are marked as needed", () => {
  const ps = [300, 100, 200, 400].map((t, i) => program(`r${i}`, t, "REASONING"));
  const v = smallestFirstVictims({
    programs: ps,
    overflow: 550,
    actingTokenWeight: 1,
    bufferPerProgram: 100,
  });
  // r1 frees 200 and r2 300: 500 < 550, so r0 (400) too; r3 is never needed.
  assert.deepEqual(
    v.mark.map((p) => p.id),
    ["r1", "r2", "r0"],
  );
});

test("victims: already-marked programs are skipped and one program always stays", () => {
  const marked = program("m", 100, "REASONING");
  marked.markedForPause = true;
  const alone = program("x", 900, "REASONING");
  const v = smallestFirstVictims({
    programs: [marked, alone],
    overflow: 5000,
    actingTokenWeight: 1,
    bufferPerProgram: 100,
  });
  assert.deepEqual([v.pause.length, v.mark.length], [0, 0]);
});

test("resume order: waiting before new before idle, then smallest, then first-come", () => {
  const mk = (id: string, tokens: number, queueSeq: number, waiting: boolean, placed: boolean) => {
    const p = program(id, tokens, "ACTING");
    p.queueSeq = queueSeq;
    p.placedOnce = placed;
    if (waiting) p.parked.push({} as never);
    return p;
  };
  const order = [
    mk("idle-small", 10, 1, false, true),
    mk("new-big", 900, 2, true, false),
    mk("waiting-big", 800, 3, true, true),
    mk("waiting-small-late", 100, 5, true, true),
    mk("waiting-small-early", 100, 4, true, true),
  ].sort(groupThenSmallest);
  assert.deepEqual(
    order.map((p) => p.id),
    ["waiting-small-early", "waiting-small-late", "waiting-big", "new-big", "idle-small"],
  );
});

test("token estimator: initial 5 chars/token, first sample assigned, then 0.2·sample + 0.8·old", () => {
  const e = createTokenEstimator();
  assert.equal(e.tokensFor(1000), 200);
  e.learn(1000, 250); // 4
  assert.equal(e.ratio, 4);
  e.learn(1200, 200); // sample 6 → 0.2·6 + 0.8·4 = 4.4
  assert.ok(Math.abs(e.ratio - 4.4) < 1e-12, `got ${e.ratio}, want 4.4`);
  e.learn(100, 0); // no sample: a zero count must not poison the ratio
  assert.ok(Math.abs(e.ratio - 4.4) < 1e-12);
});
