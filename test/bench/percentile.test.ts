import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mean, median, percentile, percentileOf, summarize } from "../../src/bench/percentile.ts";

describe("percentile", () => {
  it("interpolates between closest ranks like NumPy's default", () => {
    assert.equal(percentile([1, 2, 3, 4], 50), 2.5);
    assert.equal(percentile([10, 20, 30, 40, 50], 90), 46);
    assert.equal(percentile([0, 100], 99), 99);
  });

  it("clamps at the ends and handles one value and no values", () => {
    assert.equal(percentile([3, 7], 0), 3);
    assert.equal(percentile([3, 7], 100), 7);
    assert.equal(percentile([5], 95), 5);
    assert.ok(Number.isNaN(percentile([], 50)));
  });

  it("p99 of 1..100 is 99.01", () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.ok(Math.abs(percentile(xs, 99) - 99.01) < 1e-9);
  });
});

describe("percentileOf and median", () => {
  it("sort a copy of values in any order and leave the input as it was", () => {
    const xs = [4, 1, 3, 2];
    assert.equal(percentileOf(xs, 50), 2.5);
    assert.deepEqual(xs, [4, 1, 3, 2]);
  });

  it("the median of an even count is the mean of the two middle values, not the upper one", () => {
    assert.equal(median([5, 1, 9, 3]), 4);
    assert.equal(median([2, 8, 5]), 5);
    assert.ok(Number.isNaN(median([])));
    assert.equal(mean([1, 2, 6]), 3);
    assert.ok(Number.isNaN(mean([])));
  });

  it("p99 of 200 values interpolates where a floor rank would take the 199th", () => {
    const xs = Array.from({ length: 200 }, (_, i) => 200 - i);
    // Floor rank of a fraction, sorted[floor(0.99 × 200)], gave 199; the rule here gives 198.01.
    assert.ok(Math.abs(percentileOf(xs, 99) - 198.01) < 1e-9, `got ${percentileOf(xs, 99)}`);
  });
});

describe("summarize", () => {
  it("sorts its input and reports mean, spread and percentiles", () => {
    const s = summarize([4, 1, 3, 2]);
    assert.equal(s.count, 4);
    assert.equal(s.min, 1);
    assert.equal(s.max, 4);
    assert.equal(s.mean, 2.5);
    assert.equal(s.p50, 2.5);
    assert.ok(Math.abs(s.stdev - Math.sqrt(1.25)) < 1e-12);
  });

  it("an empty sample has count 0 and NaN statistics", () => {
    const s = summarize([]);
    assert.equal(s.count, 0);
    assert.ok(Number.isNaN(s.p95));
  });
});
