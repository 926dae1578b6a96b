import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Violation } from "../../../src/bench/soak/invariants.ts";
import {
  createSoakState,
  noteDrift,
  onRouter,
  sinceText,
  violate,
} from "../../../src/bench/soak/state.ts";

const v = (detail: string): Violation => ({ atMs: 12_500, invariant: "books", detail });

describe("the soak's state", () => {
  it("keeps each violation and says it on a line, at its moment since load started", () => {
    const lines: string[] = [];
    const st = createSoakState(10_000, (l) => lines.push(l));
    violate(st, [v("backend u used_tokens -5 < 0")]);
    assert.equal(st.violations.length, 1);
    assert.deepEqual(lines, ["VIOLATION at 2.5 s books: backend u used_tokens -5 < 0"]);
    assert.equal(sinceText(10_000, 71_234), "61.2 s");
  });

  it("names the cell in a violation only with cells", () => {
    assert.equal(onRouter(0, "router", [v("x")])[0].detail, "x");
    assert.equal(onRouter(2, "cell-b", [v("x")])[0].detail, "cell-b: x");
  });

  it("keeps the largest rounding residue the books showed, whatever its sign", () => {
    const st = createSoakState(0, () => {});
    const sample = (used: number) => ({ atMs: 0, programs: [], usedTokens: { u: used } });
    noteDrift(st, sample(3e-12));
    noteDrift(st, sample(-7e-11));
    noteDrift(st, sample(1e-12));
    noteDrift(st, sample(5));
    assert.equal(st.drift, -7e-11, "5 tokens is no residue: the books check says so");
  });
});
