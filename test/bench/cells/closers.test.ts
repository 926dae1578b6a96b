import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createClosers } from "../../../src/bench/cells/closers.ts";

describe("createClosers", () => {
  it("closes everything still registered once, whoever asks first", async () => {
    const closers = createClosers();
    const closed: string[] = [];
    const a = closers.own(async () => void closed.push("a"));
    closers.own(async () => void closed.push("b"));
    await a();
    await a();
    await closers.closeAll();
    await closers.closeAll();
    assert.deepEqual(closed, ["a", "b"]);
  });

  it("a closer that fails does not stop the others, nor reject", async () => {
    const closers = createClosers();
    const closed: string[] = [];
    closers.own(async () => {
      throw new Error("already gone");
    });
    closers.own(async () => void closed.push("b"));
    await closers.closeAll();
    assert.deepEqual(closed, ["b"]);
  });
});
