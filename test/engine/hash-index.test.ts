import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createHashIndex } from "../../src/engine/hash-index.ts";

describe("hash index", () => {
  it("agrees with a Map through a long random mix of adds, deletes and lookups", () => {
    const index = createHashIndex(64);
    const model = new Map<number, number>();
    let x = 7;
    const rand = (n: number) => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return (x >>> 4) % n;
    };
    // All keys share their low bits (home slot 120 of 128): one long run that wraps around.
    const key = (k: number) => k * 4096 + 120 + (k % 3) * 2 ** 40;
    for (let i = 0; i < 20_000; i++) {
      const k = key(rand(100));
      const op = rand(3);
      if (op === 0 && model.size < 64) {
        assert.equal(index.add(k, i), !model.has(k));
        if (!model.has(k)) model.set(k, i);
      } else if (op === 1) {
        assert.equal(index.delete(k), model.delete(k));
      } else {
        assert.equal(index.get(k), model.get(k) ?? -1);
      }
      assert.equal(index.size, model.size);
    }
    for (let k = 0; k < 100; k++) assert.equal(index.get(key(k)), model.get(key(k)) ?? -1);
  });

  it("refuses more entries than it was sized for", () => {
    const index = createHashIndex(2);
    index.add(1, 1);
    index.add(2, 2);
    assert.throws(() => index.add(3, 3), RangeError);
    assert.equal(index.add(2, 9), false, "an existing key is not an insert");
  });

  it("forgets everything on clear", () => {
    const index = createHashIndex(8);
    index.add(5, 1);
    index.clear();
    assert.equal(index.get(5), -1);
    assert.equal(index.size, 0);
  });
});
