import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type BlockPool, createBlockPool } from "../../src/engine/block-pool.ts";

const pool8 = () => createBlockPool({ numGpuBlocks: 9, blockSize: 16 });

function assertConserved(pool: BlockPool) {
  assert.equal(
    pool.numFree() + pool.numReferenced(),
    pool.numGpuBlocks - 1,
    `free ${pool.numFree()} + referenced ${pool.numReferenced()} must equal ${pool.numGpuBlocks - 1} (null block excluded)`,
  );
}

describe("block pool", () => {
  it("reserves block 0 as the null block and starts with every other block free", () => {
    const pool = pool8();
    assert.deepEqual(pool.freeQueue(), [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.equal(pool.usage(), 0);
  });

  it("computes usage as 1 − free / (numGpuBlocks − 1)", () => {
    const pool = pool8();
    pool.allocate(2, []);
    assert.equal(pool.usage(), 1 - 6 / 8);
  });

  it("allocates from the head of the free queue", () => {
    const pool = pool8();
    const out: number[] = [];
    pool.allocate(3, out);
    assert.deepEqual(out, [1, 2, 3]);
    assert.deepEqual(pool.freeQueue(), [4, 5, 6, 7, 8]);
  });

  it("frees a sequence's blocks to the tail in reverse, so its tail is evicted before its prefix", () => {
    const pool = pool8();
    const seq: number[] = [];
    pool.allocate(3, seq);
    pool.free(seq);
    assert.deepEqual(pool.freeQueue(), [4, 5, 6, 7, 8, 3, 2, 1]);
  });

  it("keeps a freed block's hash hittable until an allocation pops it", () => {
    const pool = createBlockPool({ numGpuBlocks: 3, blockSize: 16 });
    const seq: number[] = [];
    pool.allocate(1, seq);
    assert.ok(pool.register(seq[0], 12345));
    pool.free(seq);
    assert.equal(pool.lookup(12345), seq[0], "cached after free");
    assert.equal(pool.usage(), 0, "a cached but unreferenced block counts as free");
    pool.allocate(2, []);
    assert.equal(pool.lookup(12345), -1, "evicted once reallocated");
  });

  it("evicts the least recently freed cached block first (LRU)", () => {
    const pool = createBlockPool({ numGpuBlocks: 3, blockSize: 16 });
    const a: number[] = [];
    const b: number[] = [];
    pool.allocate(1, a);
    pool.allocate(1, b);
    pool.register(a[0], 1);
    pool.register(b[0], 2);
    pool.free(a);
    pool.free(b);
    pool.allocate(1, []);
    assert.equal(pool.lookup(1), -1, "a was freed first, so it goes first");
    assert.equal(pool.lookup(2), b[0]);
  });

  it("touching a cached free block takes it out of the free queue and shares it", () => {
    const pool = pool8();
    const seq: number[] = [];
    pool.allocate(1, seq);
    pool.register(seq[0], 7);
    pool.free(seq);
    pool.touch([seq[0]], 1);
    pool.touch([seq[0]], 1);
    assert.equal(pool.refCount(seq[0]), 2);
    assert.ok(!pool.freeQueue().includes(seq[0]));
    pool.free([seq[0]]);
    assert.ok(!pool.freeQueue().includes(seq[0]), "still referenced once");
    pool.free([seq[0]]);
    assert.ok(pool.freeQueue().includes(seq[0]));
    assertConserved(pool);
  });

  it("refuses to register a hash another block already holds", () => {
    const pool = pool8();
    const out: number[] = [];
    pool.allocate(2, out);
    assert.ok(pool.register(out[0], 99));
    assert.ok(!pool.register(out[1], 99));
    assert.equal(pool.lookup(99), out[0]);
  });

  it("conserves blocks through a long random sequence of operations", () => {
    const pool = createBlockPool({ numGpuBlocks: 65, blockSize: 16 });
    const held: number[][] = [];
    let x = 12345;
    const rand = (n: number) => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return (x >>> 8) % n;
    };
    for (let i = 0; i < 5000; i++) {
      const op = rand(3);
      if (op === 0 && pool.numFree() > 0) {
        const seq: number[] = [];
        pool.allocate(1 + rand(Math.min(8, pool.numFree())), seq);
        for (const b of seq) pool.register(b, rand(200));
        held.push(seq);
      } else if (op === 1 && held.length > 0) {
        pool.free(held.splice(rand(held.length), 1)[0]);
      } else if (op === 2) {
        const hit = pool.lookup(rand(200));
        if (hit >= 0) {
          pool.touch([hit], 1);
          held.push([hit]);
        }
      }
      assertConserved(pool);
    }
  });

  it("resets the prefix cache only when no block is referenced", () => {
    const pool = pool8();
    const seq: number[] = [];
    pool.allocate(1, seq);
    pool.register(seq[0], 5);
    assert.equal(pool.resetPrefixCache(), false);
    assert.equal(pool.lookup(5), seq[0]);
    pool.free(seq);
    assert.equal(pool.resetPrefixCache(), true);
    assert.equal(pool.lookup(5), -1);
    assert.equal(pool.numCached(), 0);
  });

  it("throws on an allocation larger than the free queue instead of corrupting it", () => {
    const pool = pool8();
    assert.throws(() => pool.allocate(9, []), RangeError);
    assertConserved(pool);
  });
});
