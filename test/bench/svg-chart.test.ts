import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { lineChart, stackCharts } from "../../src/bench/svg-chart.ts";

const chart = lineChart({
  title: "tr ÷ default & more",
  xLabel: "host tier (GiB)",
  xs: [0, 64, 128],
  series: [
    { label: "deepseek", colour: "#2f5fb3", ys: [1, 1.2, 1.25] },
    { label: "gemini", colour: "#1a7f37", ys: [1, 1.1, 1.3], dashed: true },
  ],
  yStep: 0.3,
});

describe("lineChart", () => {
  it("draws one line and one dot per value for each series, the dashed one dashed", () => {
    assert.equal((chart.match(/<polyline /g) ?? []).length, 2);
    assert.equal((chart.match(/<circle /g) ?? []).length, 6);
    assert.equal((chart.match(/stroke-dasharray/g) ?? []).length, 1);
  });

  it("puts a grid line every yStep up to the highest value, labelled as written", () => {
    // 1.3 ÷ 0.3 rounds up to 5 steps: lines at 0, 0.3, …, 1.5.
    assert.equal((chart.match(/stroke="#ddd"/g) ?? []).length, 6);
    assert.ok(chart.includes(">0.3</text>") && chart.includes(">1.5</text>"), chart);
  });

  it("is one SVG document with its title escaped", () => {
    assert.ok(chart.startsWith("<svg xmlns="));
    assert.ok(chart.endsWith("</svg>\n"));
    assert.ok(chart.includes("<title>tr ÷ default &amp; more</title>"));
  });
});

describe("stackCharts", () => {
  it("places each chart under the one before, in one document twice the height", () => {
    const both = stackCharts("two", [chart, chart]);
    assert.ok(both.includes('<svg y="0" '));
    assert.ok(both.includes('<svg y="340" '));
    assert.match(both, /^<svg [^>]*height="680"/);
  });
});
