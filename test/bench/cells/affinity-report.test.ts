import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { affinityLines, failoverLines } from "../../../src/bench/cells/affinity-report.ts";
import { cellsFigures } from "../../../src/bench/cells/figures.ts";
import { fixtureRun } from "./fixture.ts";

const run = fixtureRun();
const f = cellsFigures(run);

describe("affinityLines", () => {
  it("a row per phase with its calm window, then the programs that moved", () => {
    const lines = affinityLines(run, f);
    const table = lines[2].split("\n");
    assert.match(table[2], /^stable\s+whole phase\s+4\s+100\.00 %\s+0$/);
    assert.match(table[3], /^dead\s+from cell-b DOWN \(kill \+ 400 ms\)\s+3\s+100\.00 %\s+0$/);
    assert.match(table[4], /^back\s+from cell-b UP \(restart \+ 1000 ms\)\s+2\s+100\.00 %\s+0$/);
    assert.equal(
      lines[3],
      "moved at the kill: 1 of the 3 programs answered before the kill and after DOWN (1 of cell-b's, 0 of other cells'); " +
        "moved at the restart: 1 of 2 answered before the restart and after UP (1 back to cell-b, 0 elsewhere)",
    );
  });
});

describe("failoverLines", () => {
  it("the victim's programs by fate, the times to another cell, and the bound", () => {
    const lines = failoverLines(run, f);
    assert.match(
      lines[1],
      /: 4; 2 then answered on another cell .* 1 lost .* 1 sent nothing more .* 0 other$/,
    );
    const table = lines[2].split("\n");
    assert.match(table[2], /^kill → HAProxy sent it to another cell\s+2\s+475\s+500$/);
    assert.match(
      table[5],
      /^ {2}of which the new cell's router held it \(x-maitred-paused-ms\)\s+2\s+25\s+50$/,
    );
    assert.match(
      lines[3],
      /1000 ms \+ one step \(median in stable 100 ms\) = 1100 ms; .*DOWN 400 ms after the kill/,
    );
  });

  it("with no program answered elsewhere, the times print as -", () => {
    const g = {
      ...f,
      failover: { ...f.failover, toSent: [], toAnswer: [], fromAttempt: [], heldThere: [] },
    };
    const table = failoverLines(run, g)[2].split("\n");
    assert.match(table[2], /\s+0\s+-\s+-$/);
  });
});
