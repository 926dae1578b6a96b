import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { f0, f3, maxOf, sec } from "../../../src/bench/cells/format.ts";

describe("the report's numbers", () => {
  it("print what was not measured as -", () => {
    assert.equal(f0(Number.NaN), "-");
    assert.equal(f3(Number.POSITIVE_INFINITY), "-");
    assert.equal(f3(1 / 3), "0.333");
    assert.equal(f0(maxOf([])), "-");
    assert.equal(maxOf([3, 9, 1]), 9);
    assert.equal(sec(1_250), "1.3 s");
  });
});
