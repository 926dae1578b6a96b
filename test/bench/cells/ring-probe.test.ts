import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createClosers } from "../../../src/bench/cells/closers.ts";
import { askEach, startStubCells } from "../../../src/bench/cells/ring-probe.ts";

describe("the ring probe's stub cells", () => {
  it("each answers any id with its name, and all stop with the closers", async () => {
    const closers = createClosers();
    const stubs = await startStubCells(["cell-a", "cell-b"], closers);
    try {
      assert.deepEqual(
        stubs.cells.map((c) => c.name),
        ["cell-a", "cell-b"],
      );
      const ids = Array.from({ length: 20 }, (_, i) => `cells-p${i}`);
      const map = await askEach(`http://${stubs.cells[1].address}`, ids);
      assert.equal(map.size, 20);
      assert.deepEqual(new Set(map.values()), new Set(["cell-b"]));
    } finally {
      await closers.closeAll();
    }
    await assert.rejects(
      fetch(`http://${stubs.cells[0].address}/`),
      "a stopped stub refuses connections",
    );
  });
});
