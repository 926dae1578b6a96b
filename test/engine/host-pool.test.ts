import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { createHostPool } from "../../src/engine/host-pool.ts";

/** Seeded: FC_SEED replays a failure (fast-check prints the seed of any failing run). */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);

describe("host pool", () => {
  it("holds what it stored until it is full, then evicts the least recently used key", () => {
    const pool = createHostPool(3);
    for (const h of [10, 11, 12]) assert.equal(pool.store(h), true);
    assert.equal(pool.store(10), true); // refreshed: 11 is now the oldest
    assert.equal(pool.store(13), true);
    assert.deepEqual(
      [10, 11, 12, 13].map((h) => pool.has(h)),
      [true, false, true, true],
    );
    assert.equal(pool.size, 3);
    assert.equal(pool.evicted, 1);
  });

  it("never evicts a key a load is reading; with every key pinned the store is skipped", () => {
    const pool = createHostPool(2);
    pool.store(1);
    pool.store(2);
    pool.pin([1]);
    assert.equal(pool.store(3), true); // 2 goes, although 1 is older
    assert.equal(pool.has(1), true);
    assert.equal(pool.has(2), false);
    pool.pin([3]);
    assert.equal(pool.store(4), false);
    assert.equal(pool.skipped, 1);
    pool.unpin([1]);
    assert.equal(pool.store(4), true);
    assert.equal(pool.has(1), false);
  });

  it("a lookup counts the run of held keys from its start and stops at the first miss", () => {
    const pool = createHostPool(8);
    const chain = [100, 101, 102, 103, 104];
    for (const h of [100, 101, 102, 104]) pool.store(h);
    assert.equal(
      pool.count((i) => chain[i], 0, chain.length),
      3,
    );
    assert.equal(
      pool.count((i) => chain[i], 1, chain.length),
      2,
    );
    assert.equal(
      pool.count((i) => chain[i], 3, chain.length),
      0,
    );
    assert.equal(
      pool.count((i) => chain[i], 0, 2),
      2,
    );
  });

  it("a touch refreshes a chain deepest first: its tail is evicted before its root", () => {
    const pool = createHostPool(4);
    const chain = [1, 2, 3, 4];
    for (const h of [1, 2, 3]) pool.store(h);
    pool.store(9);
    pool.count((i) => chain[i], 0, chain.length); // changes nothing
    pool.touch((i) => chain[i], 0, chain.length); // 4 is not held; order now 9, 3, 2, 1
    pool.store(20); // evicts 9
    pool.store(21); // evicts 3, the chain's tail
    assert.deepEqual(
      [1, 2, 3, 9].map((h) => pool.has(h)),
      [true, true, false, false],
    );
  });

  it("a pool of no blocks stores nothing; pinning a key it does not hold is an error", () => {
    const pool = createHostPool(0);
    assert.equal(pool.store(1), false);
    assert.equal(pool.size, 0);
    assert.throws(() => pool.pin([1]), /does not hold/);
    assert.throws(() => createHostPool(-1), RangeError);
    assert.throws(() => createHostPool(1.5), RangeError);
  });

  it("behaves as a plain LRU list of unpinned keys under any sequence of operations", () => {
    type Op =
      | { kind: "store"; hash: number }
      | { kind: "count"; from: number; to: number }
      | { kind: "touch"; from: number; to: number }
      | { kind: "pin"; hash: number }
      | { kind: "unpin" };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant("store" as const), hash: fc.integer({ min: 0, max: 11 }) }),
      fc.record({
        kind: fc.constantFrom("count" as const, "touch" as const),
        from: fc.integer({ min: 0, max: 11 }),
        to: fc.integer({ min: 0, max: 12 }),
      }),
      fc.record({ kind: fc.constant("pin" as const), hash: fc.integer({ min: 0, max: 11 }) }),
      fc.record({ kind: fc.constant("unpin" as const) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5 }), fc.array(op, { maxLength: 60 }), (cap, ops) => {
        const pool = createHostPool(cap);
        // The model: keys least recently used first, and pins per key.
        let order: number[] = [];
        const pins = new Map<number, number>();
        const pinned: number[] = [];
        const touch = (h: number) => {
          order = order.filter((k) => k !== h);
          order.push(h);
        };
        for (const o of ops) {
          if (o.kind === "store") {
            let expected = true;
            if (order.includes(o.hash)) touch(o.hash);
            else {
              if (order.length >= cap) {
                const victim = order.find((k) => (pins.get(k) ?? 0) === 0);
                if (victim === undefined) expected = false;
                else order = order.filter((k) => k !== victim);
              }
              if (cap === 0) expected = false;
              if (expected) order.push(o.hash);
            }
            assert.equal(pool.store(o.hash), expected);
          } else if (o.kind === "count") {
            let n = 0;
            while (o.from + n < o.to && order.includes(o.from + n)) n++;
            assert.equal(
              pool.count((i) => i, o.from, o.to),
              n,
            );
          } else if (o.kind === "touch") {
            for (let i = o.to - 1; i >= o.from; i--) if (order.includes(i)) touch(i);
            pool.touch((i) => i, o.from, o.to);
          } else if (o.kind === "pin") {
            if (!order.includes(o.hash)) continue;
            pool.pin([o.hash]);
            pins.set(o.hash, (pins.get(o.hash) ?? 0) + 1);
            pinned.push(o.hash);
          } else {
            const h = pinned.pop();
            if (h === undefined) continue;
            pool.unpin([h]);
            pins.set(h, (pins.get(h) as number) - 1);
          }
          assert.equal(pool.size, order.length);
          assert.ok(pool.size <= cap);
          for (const k of order) assert.equal(pool.has(k), true, `key ${k} should be held`);
        }
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});
