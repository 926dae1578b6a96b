import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createClosers } from "../../../src/bench/cells/closers.ts";
import { cellsStack } from "../../../src/bench/cells/stack.ts";

describe("cellsStack", () => {
  it("runs the cells' routers as tr, their times scaled with the engines'", () => {
    const settings = { numGpuBlocks: 4000, profile: "llama-3.1-8b-h100" };
    const at1 = cellsStack({ ...settings, timeScale: 1 }, createClosers()).routerConfig;
    const at4 = cellsStack({ ...settings, timeScale: 4 }, createClosers()).routerConfig;
    assert.equal(at1.router, "tr");
    assert.equal(at4.maxPauseMs, at1.maxPauseMs / 4);
  });
});
