import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import {
  attach,
  decayedActingTokens,
  detach,
  markForPause,
  refreshCredit,
  refreshFootprint,
  setHeadroom,
  setLent,
  setProgramClass,
  setStatus,
} from "../../src/core/ledger.ts";
import { createClassBooks } from "../../src/core/priority/priority-state.ts";
import type { RequestRecord } from "../../src/core/records.ts";
import { beliefUsedTokens } from "../../src/core/room.ts";
import { DEFAULT_SCHEDULER_CONFIG } from "../../src/core/scheduler-config.ts";
import { createBackendBook, createProgramRecord } from "../../src/core/scheduler-state.ts";

test("books follow status, footprint and detach incrementally, back to zero", () => {
  const b = createBackendBook({ id: "b0", type: "vllm" });
  const p = createProgramRecord("p", 1, null, 0);
  p.knownTokens = 500;
  p.headroom = 100;
  refreshFootprint(p);
  attach(p, b);
  assert.deepEqual([b.actingTokens, b.actingPrograms, b.headroomTokens], [500, 1, 100]);
  setStatus(p, "REASONING", 0);
  assert.deepEqual([b.reasoningTokens, b.actingTokens, b.reasoningPrograms], [500, 0, 1]);
  p.knownTokens = 700;
  refreshFootprint(p);
  assert.equal(b.reasoningTokens, 700);
  setHeadroom(p, 300);
  assert.equal(beliefUsedTokens(b, DEFAULT_SCHEDULER_CONFIG, 0), 1000, "700 + 300 headroom");
  detach(p);
  assert.deepEqual(
    [b.reasoningTokens, b.reasoningPrograms, b.programs.size, b.headroomTokens],
    [0, 0, 0, 0],
  );
});

/** Program p (500 tokens, headroom 100) attached to a backend that keeps class books. */
function attachedWithClassBooks() {
  const b = createBackendBook({ id: "b0", type: "vllm" });
  b.classBooks = createClassBooks();
  const p = createProgramRecord("p", 1, null, 0);
  p.knownTokens = 500;
  p.headroom = 100;
  refreshFootprint(p);
  attach(p, b);
  return { b, p };
}

test("a lent program books nothing on its backend, and everything again once taken back", () => {
  const { b, p } = attachedWithClassBooks();
  setLent(p, true);
  assert.deepEqual(
    [
      b.actingTokens,
      b.headroomTokens,
      b.actingPrograms,
      b.lentPrograms,
      b.classBooks?.[2].actingTokens,
    ],
    [0, 0, 1, 1, 0],
    "lent: still on the backend, nothing booked",
  );
  setHeadroom(p, 300); // a lent program's changes wait for it to be taken back
  assert.equal(b.headroomTokens, 0);
  setLent(p, false);
  assert.deepEqual([b.actingTokens, b.headroomTokens, b.lentPrograms], [500, 300, 0]);
  detach(p);
  assert.deepEqual([b.actingTokens, b.headroomTokens, b.actingPrograms], [0, 0, 0]);
});

test("class books sum headroom through headroom, class, status and detach changes, back to zero", () => {
  const { b, p } = attachedWithClassBooks();
  const headroomByClass = () => b.classBooks?.map((c) => c.headroomTokens);
  assert.deepEqual(headroomByClass(), [0, 0, 100, 0], "default class: index 2");
  setHeadroom(p, 400);
  assert.deepEqual(headroomByClass(), [0, 0, 400, 0]);
  setProgramClass(p, 1);
  assert.deepEqual(headroomByClass(), [0, 400, 0, 0]);
  setStatus(p, "REASONING", 0);
  assert.deepEqual(headroomByClass(), [0, 400, 0, 0], "a status change keeps the sum");
  detach(p);
  setHeadroom(p, 900); // detached: no book holds it
  assert.deepEqual(headroomByClass(), [0, 0, 0, 0]);
  attach(p, b);
  assert.deepEqual(headroomByClass(), [0, 900, 0, 0]);
});

test("the materialised sum counts a REASONING program only once its request is prefilled", () => {
  const b = createBackendBook({ id: "b0", type: "vllm" });
  const p = createProgramRecord("p", 1, null, 0);
  p.knownTokens = 500;
  refreshFootprint(p);
  attach(p, b);
  setStatus(p, "REASONING", 0);
  const r = { prefilled: false } as RequestRecord;
  p.inFlight.push(r);
  refreshCredit(p);
  assert.equal(b.materialisedTokens, 0, "prefilling: not in the engine's KV yet");
  r.prefilled = true;
  refreshCredit(p);
  assert.equal(b.materialisedTokens, 500);
  p.knownTokens = 800;
  refreshFootprint(p);
  assert.equal(b.materialisedTokens, 800, "footprint changes follow");
  setStatus(p, "ACTING", 0);
  assert.equal(b.materialisedTokens, 0, "ACTING leaves the sum");
  setStatus(p, "REASONING", 0);
  detach(p);
  assert.equal(b.materialisedTokens, 0, "back to zero after detach");
});

test("decayed acting tokens halve every second and survive long clocks without overflow", () => {
  const b = createBackendBook({ id: "b0", type: "vllm" });
  const start = 1_700_000_000_000; // a wall-clock epoch in ms: exponents must not blow up
  const p = createProgramRecord("p", 1, null, start);
  p.knownTokens = 800;
  refreshFootprint(p);
  attach(p, b);
  assert.equal(decayedActingTokens(b, start), 800);
  assert.equal(decayedActingTokens(b, start + 1000), 400);
  assert.equal(decayedActingTokens(b, start + 3000), 100);
  const later = start + 3_600_000;
  const q = createProgramRecord("q", 2, null, later);
  q.knownTokens = 1000;
  refreshFootprint(q);
  attach(q, b);
  const got = decayedActingTokens(b, later + 2000);
  assert.ok(Math.abs(got - 250) < 1e-9, `got ${got}, want 250 (p decayed to ~0)`);
  detach(q);
  detach(p);
  assert.ok(decayedActingTokens(b, later + 2000) < 1e-9);
});

test("books of fractional programs read exactly zero once their last program leaves", () => {
  // A failure prints fast-check's seed and path; FC_SEED=<seed> replays it.
  const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
  fc.assert(
    fc.property(
      fc.array(
        fc.record({
          tokens: fc.double({ min: 0, max: 1e5, noNaN: true }),
          headroom: fc.double({ min: 0, max: 1e4, noNaN: true }),
          newHeadroom: fc.double({ min: 0, max: 1e4, noNaN: true }),
          reasoning: fc.boolean(),
          lent: fc.boolean(),
          marked: fc.boolean(),
          cls: fc.integer({ min: 0, max: 2 }),
        }),
        { minLength: 1, maxLength: 40 },
      ),
      fc.array(fc.nat(), { maxLength: 40 }),
      (specs, order) => {
        const b = createBackendBook({ id: "b0", type: "vllm" });
        b.classBooks = createClassBooks();
        const programs = specs.map((s, i) => {
          const p = createProgramRecord(`p${i}`, 1, null, 0);
          p.knownTokens = s.tokens;
          p.headroom = s.headroom;
          refreshFootprint(p);
          attach(p, b);
          if (s.reasoning) setStatus(p, "REASONING", i);
          else setLent(p, s.lent);
          setProgramClass(p, s.cls);
          if (s.marked) markForPause(p);
          setHeadroom(p, s.newHeadroom);
          return p;
        });
        // Leave in an arbitrary order.
        for (const k of order) {
          if (programs.length === 0) break;
          detach(programs.splice(k % programs.length, 1)[0]);
        }
        for (const p of programs) detach(p);
        const sums = [
          b.reasoningTokens,
          b.actingTokens,
          b.headroomTokens,
          b.reasoningHeadroom,
          b.lentTokens,
          b.markedTokens,
          b.markedHeadroom,
          b.materialisedTokens,
          b.decaySum,
          beliefUsedTokens(b, DEFAULT_SCHEDULER_CONFIG, 0),
          ...(b.classBooks ?? []).flatMap((c) => [
            c.reasoningTokens,
            c.actingTokens,
            c.headroomTokens,
          ]),
        ];
        assert.ok(
          sums.every((x) => Object.is(x, 0)),
          `every sum is exactly 0: ${sums}`,
        );
      },
    ),
    { numRuns: 300, ...(seed === undefined ? {} : { seed }) },
  );
});
