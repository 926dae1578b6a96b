import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  findRun,
  fix,
  meanOf,
  mega,
  ratioOf,
  seedsText,
  writeJson,
} from "../../../src/bench/sims/scorecard.ts";

describe("the scorecards' figures", () => {
  it("a figure has its decimals; a missing or non-finite one is the table's dash", () => {
    assert.equal(fix(1.005, 1), "1.0");
    assert.equal(fix(2, 0), "2");
    assert.equal(fix(null, 1), "–");
    assert.equal(fix(undefined, 1), "–");
    assert.equal(fix(Number.NaN, 1), "–");
    assert.equal(fix(Number.POSITIVE_INFINITY, 2, "-"), "-");
    assert.equal(mega(2_345_678), "2.3");
    assert.equal(mega(undefined), "–");
  });

  it("a ratio over nothing, or with a side missing, is null", () => {
    assert.equal(ratioOf(3, 2), 1.5);
    assert.equal(ratioOf(3, 0), null);
    assert.equal(ratioOf(undefined, 2), null);
    assert.equal(ratioOf(3, null), null);
  });

  it("the mean leaves out what was not measured, and is null when nothing was", () => {
    fc.assert(
      fc.property(
        fc.array(fc.option(fc.integer({ min: -1000, max: 1000 }), { nil: null })),
        (xs) => {
          const known = xs.filter((x) => x !== null);
          const m = meanOf(xs);
          if (known.length === 0) return m === null;
          return m !== null && Math.min(...known) <= m && m <= Math.max(...known);
        },
      ),
    );
    assert.equal(meanOf([1, null, 3]), 2);
  });

  it("seeds are said in the singular or the plural", () => {
    assert.equal(seedsText([7]), "seed 7");
    assert.equal(seedsText([7, 1]), "seeds 7, 1");
  });

  it("a run the scorecard made but cannot find is its bug, said with the run", () => {
    const runs = [{ k: 1 }, { k: 2 }];
    assert.equal(
      findRun(runs, (r) => r.k === 2, "k 2"),
      runs[1],
    );
    assert.throws(() => findRun(runs, (r) => r.k === 3, "k 3"), /no run k 3/);
  });

  it("--json is the document indented by two with a final newline", () => {
    const dir = mkdtempSync(join(tmpdir(), "scorecard-"));
    try {
      const file = join(dir, "out.json");
      writeJson(file, { runs: [1] });
      assert.equal(readFileSync(file, "utf8"), '{\n  "runs": [\n    1\n  ]\n}\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
