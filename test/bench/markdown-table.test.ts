import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { grouped, markdownTable } from "../../src/bench/markdown-table.ts";

describe("markdownTable", () => {
  it("aligns the first column left and the figures right by default", () => {
    assert.equal(
      markdownTable(["router", "steps/min"], [["tr", "12.5"]]),
      "| router | steps/min |\n| --- | ---: |\n| tr | 12.5 |",
    );
  });

  it("a count of left columns aligns that many left", () => {
    const t = markdownTable(["api", "tokens", "µs"], [], 2);
    assert.equal(t, "| api | tokens | µs |\n| --- | --- | ---: |");
  });

  it("named left columns align left wherever they stand; none named: every column right", () => {
    assert.equal(
      markdownTable(["size", "router", "p99"], [], ["router"]).split("\n")[1],
      "| ---: | --- | ---: |",
    );
    assert.equal(markdownTable(["a", "b"], [], []).split("\n")[1], "| ---: | ---: |");
  });
});

describe("grouped", () => {
  it("groups thousands and keeps the digits asked for", () => {
    assert.equal(grouped(1234567), "1,234,567");
    assert.equal(grouped(1234.5, 1), "1,234.5");
  });
});
