import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRng, deriveSeed, permutation } from "../../src/workload/prng.ts";

describe("createRng", () => {
  it("same seed gives the same sequence, a different seed a different one", () => {
    const a = createRng(42);
    const b = createRng(42);
    const c = createRng(43);
    const sa = Array.from({ length: 50 }, () => a.next());
    const sb = Array.from({ length: 50 }, () => b.next());
    const sc = Array.from({ length: 50 }, () => c.next());
    assert.deepEqual(sa, sb);
    assert.notDeepEqual(sa, sc);
  });

  it("uniforms stay in [0, 1) and average near 0.5", () => {
    const rng = createRng(7);
    let sum = 0;
    for (let i = 0; i < 20_000; i++) {
      const u = rng.next();
      assert.ok(u >= 0 && u < 1, `got ${u}, want [0, 1)`);
      sum += u;
    }
    assert.ok(Math.abs(sum / 20_000 - 0.5) < 0.01, `mean ${sum / 20_000}, want ≈ 0.5`);
  });

  it("normals have mean ≈ 0 and standard deviation ≈ 1", () => {
    const rng = createRng(9);
    const xs = Array.from({ length: 20_000 }, () => rng.normal());
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    const sd = Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length);
    assert.ok(Math.abs(mean) < 0.03, `mean ${mean}`);
    assert.ok(Math.abs(sd - 1) < 0.03, `sd ${sd}`);
  });

  it("int covers both bounds and nothing outside them", () => {
    const rng = createRng(3);
    const seen = new Set<number>();
    for (let i = 0; i < 1000; i++) seen.add(rng.int(2, 5));
    assert.deepEqual([...seen].sort(), [2, 3, 4, 5]);
  });
});

describe("deriveSeed", () => {
  it("is deterministic and separates swapped parts", () => {
    assert.equal(deriveSeed(1, 7), deriveSeed(1, 7));
    assert.notEqual(deriveSeed(1, 7), deriveSeed(7, 1));
    assert.notEqual(deriveSeed(1, 2, 3), deriveSeed(1, 3, 2));
  });
});

describe("permutation", () => {
  it("returns every index exactly once", () => {
    const p = permutation(100, createRng(5));
    assert.deepEqual(
      [...p].sort((a, b) => a - b),
      Array.from({ length: 100 }, (_, i) => i),
    );
    assert.notDeepEqual(
      p,
      Array.from({ length: 100 }, (_, i) => i),
      "want a shuffled order",
    );
  });
});
