import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  affinity,
  apportion,
  byProgram,
  cpuShares,
  logOf,
  meanInFlight,
  moves,
} from "../../../src/bench/cells/cells-analysis.ts";
import type { HapRequest } from "../../../src/bench/cells/haproxy-log.ts";
import type { ProgramRecord } from "../../../src/bench/records.ts";

/** Seeded: FC_SEED replays a failure (fast-check prints the seed of any failing run). */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);

const req = (program: string, server: string, startMs: number, o: Partial<HapRequest> = {}) =>
  ({
    startMs,
    sentMs: startMs,
    endMs: startMs + 10,
    server,
    program,
    status: 200,
    tR: 0,
    tw: 0,
    tc: 0,
    tr: 10,
    ta: 10,
    retries: 0,
    term: "----",
    method: "POST",
    path: "/v1/chat/completions",
    ...o,
  }) satisfies HapRequest;

describe("affinity", () => {
  it("is each program's share on its most-used cell, counting only answers inside the span", () => {
    const reqs = [
      req("p1", "a", 0),
      req("p1", "a", 100),
      req("p1", "b", 200),
      req("p1", "b", 300, { status: 503 }), // not answered: left out
      req("p2", "c", 100),
      req("p2", "a", 995), // ends after the span: left out
    ];
    const got = affinity(reqs, { from: 0, to: 1000 });
    assert.equal(got.programs, 2);
    assert.equal(got.below, 1, "p1 was served by two cells");
    assert.ok(Math.abs(got.meanShare - (2 / 3 + 1) / 2) < 1e-12, `got ${got.meanShare}`);
  });

  it("no request in the span: no program and a NaN share", () => {
    assert.ok(Number.isNaN(affinity([], { from: 0, to: 1 }).meanShare));
  });
});

describe("moves", () => {
  it("a program moved when its last cell before differs from its first cell after", () => {
    const reqs = [
      req("p1", "b", 0),
      req("p1", "a", 1500),
      req("p2", "c", 100),
      req("p2", "c", 1200),
      req("p3", "a", 100), // not seen after: not counted
    ];
    const got = moves(reqs, { from: 0, to: 1000 }, { from: 1000, to: 2000 });
    assert.equal(got.both, 2);
    assert.deepEqual(got.moved, [{ program: "p1", from: "b", to: "a" }]);
  });
});

describe("logOf", () => {
  it("matches an attempt to its program's request that started nearest it, within a second", () => {
    const index = byProgram([req("p1", "a", 5_000), req("p1", "b", 1_000), req("p2", "c", 1_010)]);
    assert.deepEqual(
      index.get("p1")?.map((r) => r.startMs),
      [1_000, 5_000],
      "sorted by start",
    );
    assert.equal(logOf({ programId: "p1", startMs: 1_200 }, index)?.server, "b");
    assert.equal(logOf({ programId: "p1", startMs: 3_000 }, index), null, "nothing within 1 s");
    assert.equal(logOf({ programId: "p9", startMs: 1_000 }, index), null);
  });
});

describe("meanInFlight and apportion", () => {
  const program = (programId: string, launchMs: number, endMs?: number) =>
    ({ programId, launchMs, endMs, outcome: "completed" }) as unknown as ProgramRecord;

  it("averages each cell's programs in flight over the span, a running one up to the run's end", () => {
    const cellOf = (id: string) => ({ p1: "a", p2: "b", p3: "a" })[id];
    const got = meanInFlight(
      ["a", "b"],
      [program("p1", 0, 500), program("p2", 0), program("p3", 900, 1_500)],
      2_000,
      0,
      cellOf,
      { from: 0, to: 1_000 },
    );
    assert.deepEqual(got, [0.5 + 0.1, 1]);
  });

  it("splits a total into integers by largest remainders, summing to the total", () => {
    assert.deepEqual(apportion([0.6, 1, 1.4], 24), [5, 8, 11]);
    assert.deepEqual(apportion([1, 1, 1], 4), [2, 1, 1]);
  });

  it("any split sums to the total, each share within one of its exact part", () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.01, max: 100, noNaN: true }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 10_000 }),
        (weights, total) => {
          const out = apportion(weights, total);
          const whole = weights.reduce((s, v) => s + v, 0);
          assert.equal(
            out.reduce((s, v) => s + v, 0),
            total,
          );
          out.forEach((n, i) => {
            const exact = (weights[i] / whole) * total;
            assert.ok(Number.isInteger(n) && Math.abs(n - exact) < 1 + 1e-9, `${n} for ${exact}`);
          });
        },
      ),
      { seed: SEED },
    );
  });
});

describe("cpuShares", () => {
  it("gives each part's % of one CPU, and the rest of the machine's busy time as other", () => {
    const s0 = { backends: 10, cells: 5, haproxy: 1, driver: 2, busy: 1_000, total: 4_000 };
    // 10 s apart on 2 CPUs: the machine was busy half the time, 10 CPU-seconds in all.
    const s1 = { backends: 14, cells: 7, haproxy: 1.5, driver: 2.5, busy: 2_000, total: 6_000 };
    const got = cpuShares(s0, s1, 10_000, 2);
    assert.equal(got.machine, 50);
    assert.equal(got.backends, 40);
    assert.equal(got.cells, 20);
    assert.equal(got.haproxy, 5);
    assert.equal(got.driver, 5);
    assert.ok(Math.abs(got.other - 30) < 1e-9, `got ${got.other}: 10 CPU-s less our 7`);
  });
});
