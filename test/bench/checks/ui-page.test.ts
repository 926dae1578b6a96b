import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { countsLine, type PageCounts, pageProblems } from "../../../src/bench/checks/ui-page.ts";

const good: PageCounts = { backends: 2, programs: 5, charts: 2, decisions: 7, status: "live" };

describe("check:ui's judgement of the page", () => {
  it("finds nothing wrong with two backends, some programs, two charts and a live status", () => {
    assert.deepEqual(pageProblems(good), []);
    assert.deepEqual(
      pageProblems({ ...good, decisions: 0 }),
      [],
      "decisions are listed, not required",
    );
  });

  it("names each thing missing", () => {
    assert.deepEqual(
      pageProblems({ backends: 1, programs: 0, charts: 0, decisions: 0, status: null }),
      [
        "1 backend rows, want 2",
        "no program rows",
        "0 charts drawn, want 2",
        'status "null", want "live"',
      ],
    );
  });

  it("prints the counts in one line", () => {
    assert.equal(
      countsLine(good, 1),
      'backend rows 2, program rows 5, charts 2, decisions listed 7, status "live", console errors 1',
    );
  });
});
