import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  BACKEND_FAULTS,
  CELL_FAULT_KINDS,
  FAULT_KINDS,
  type FaultKind,
  faultLengths,
  faultSchedule,
} from "../../../src/bench/soak/schedule.ts";

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

describe("faultSchedule with cells", () => {
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
});

describe("faultLengths", () => {
  const run = { durationMs: 20 * 60_000, warmupMs: 60_000, tailMs: 60_000, pollTimeoutMs: 2_000 };

  it("gives each kind the length it needs when the slots are long enough", () => {
    // 18 min of faults in 27 slots of 40 s: nothing is cut.
    const l = faultLengths({ ...run, cells: 0, perKind: 3 });
    assert.deepEqual(
      [l.kill, l.stop, l["metrics-slow"], l["disconnect-held"], l.burst, l["kill-cell"]],
      [5_000, 15_000, 20_000, 10_000, 10_000, 10_000],
    );
  });

  it("cuts every kind to 0.7 of its slot on a short run, and the schedule then fits", () => {
    // A minute with 6 s of warm-up and of tail: 9 slots of 5333 ms, each fault 3733 ms.
    const short = { durationMs: 60_000, warmupMs: 6_000, tailMs: 6_000, pollTimeoutMs: 1_000 };
    const l = faultLengths({ ...short, cells: 0, perKind: 1 });
    for (const k of FAULT_KINDS) assert.equal(l[k], 3_733, k);
    const s = faultSchedule({ ...short, seed: 1, backends: 2, perKind: 1, lengthMs: l });
    assert.equal(s.length, FAULT_KINDS.length);
  });

  it("keeps a stop past three poll timeouts even when that no longer fits its slot", () => {
    const short = { durationMs: 60_000, warmupMs: 6_000, tailMs: 6_000, pollTimeoutMs: 2_000 };
    const l = faultLengths({ ...short, cells: 0, perKind: 1 });
    assert.equal(l.stop, 6_000, "a shorter stop would read as a slow backend, not a frozen one");
    assert.throws(
      () => faultSchedule({ ...short, seed: 1, backends: 2, perKind: 1, lengthMs: l }),
      /a stop fault of 6000 ms does not fit/,
    );
  });

  it("shares the run with the cell kills only with two cells or more", () => {
    const lone = faultLengths({ ...run, durationMs: 5 * 60_000, cells: 1, perKind: 3 });
    const two = faultLengths({ ...run, durationMs: 5 * 60_000, cells: 2, perKind: 3 });
    // 3 min of faults: 27 slots of 6667 ms alone, 30 of 6000 ms with the cell kills.
    assert.equal(lone.burst, 4_666);
    assert.equal(two.burst, 4_200);
  });

  it("gives schedules that never overlap and stay inside the run, for any seed and fleet", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 2, max: 60 }),
        (seed, perKind, cells, perCell, minutes) => {
          const durationMs = minutes * 60_000;
          const warmupMs = Math.min(60_000, durationMs * 0.1);
          const o = { durationMs, warmupMs, tailMs: warmupMs, pollTimeoutMs: 500 };
          const backends = Math.max(2, Math.max(1, cells) * perCell);
          const s = faultSchedule({
            ...o,
            seed,
            backends,
            cells,
            perKind,
            lengthMs: faultLengths({ ...o, cells, perKind }),
          });
          const kinds = cells >= 2 ? FAULT_KINDS.length + 1 : FAULT_KINDS.length;
          assert.equal(s.length, kinds * perKind);
          assert.ok(s[0].atMs >= warmupMs);
          const last = s[s.length - 1];
          assert.ok(last.atMs + last.lengthMs <= durationMs - warmupMs);
          for (let i = 1; i < s.length; i++)
            assert.ok(s[i - 1].atMs + s[i - 1].lengthMs <= s[i].atMs, `fault ${i} overlaps`);
          for (const f of s) {
            if (f.backend !== null) assert.ok(f.backend >= 0 && f.backend < backends);
            if (f.cell !== null) assert.ok(f.cell >= 0 && f.cell < cells);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
