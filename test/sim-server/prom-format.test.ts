import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  createExpositionWriter,
  floatToGoString,
  pythonFloatRepr,
  sampleLine,
} from "../../src/sim-server/prom-format.ts";

describe("pythonFloatRepr", () => {
  const cases: Array<[number, string]> = [
    [0, "0.0"],
    [12, "12.0"],
    [0.4137, "0.4137"],
    [0.001, "0.001"],
    [0.0001, "0.0001"],
    [0.00001, "1e-05"],
    [1.5e-7, "1.5e-07"],
    [96115, "96115.0"],
    [1843264, "1843264.0"],
    [1e15, "1000000000000000.0"],
    [1e16, "1e+16"],
    [1.5e16, "1.5e+16"],
    [-2.5, "-2.5"],
    [0.1 + 0.2, "0.30000000000000004"],
  ];
  for (const [value, want] of cases) {
    it(`renders ${value} as Python's repr ${want}`, () => {
      assert.equal(pythonFloatRepr(value), want);
    });
  }
});

describe("floatToGoString", () => {
  const cases: Array<[number, string]> = [
    [12, "12.0"],
    [0.4137, "0.4137"],
    [96115, "96115.0"],
    [999999, "999999.0"],
    [1843264, "1.843264e+06"],
    [1000000, "1e+06"],
    [1763312345.678, "1.763312345678e+09"],
    // prometheus_client's `e+0{dot-1}` template, copied as is.
    [12345678901, "1.2345678901e+010"],
    [Number.POSITIVE_INFINITY, "+Inf"],
    [Number.NEGATIVE_INFINITY, "-Inf"],
    [Number.NaN, "NaN"],
    [2560, "2560.0"],
    [1, "1.0"],
  ];
  for (const [value, want] of cases) {
    it(`renders ${value} as ${want} like prometheus_client`, () => {
      assert.equal(floatToGoString(value), want);
    });
  }
});

describe("sampleLine", () => {
  it("sorts labels by name and escapes quotes, backslashes and newlines in values", () => {
    const line = sampleLine("m", { model_name: 'a"b\\c\nd', engine: "0" }, 3);
    assert.equal(line, 'm{engine="0",model_name="a\\"b\\\\c\\nd"} 3.0\n');
  });
});

describe("createExpositionWriter", () => {
  it("renders a counter as _total then a _created gauge family with the same HELP", () => {
    const w = createExpositionWriter({ created: 1763312345.678 });
    w.counter("x:c", "Help.", [[{ a: "1" }, 5]]);
    assert.equal(
      w.text(),
      [
        "# HELP x:c_total Help.",
        "# TYPE x:c_total counter",
        'x:c_total{a="1"} 5.0',
        "# HELP x:c_created Help.",
        "# TYPE x:c_created gauge",
        'x:c_created{a="1"} 1.763312345678e+09',
        "",
      ].join("\n"),
    );
  });

  it("renders cumulative histogram buckets, +Inf, _count, _sum, then _created", () => {
    const w = createExpositionWriter({ created: 1 });
    w.histogram(
      "h",
      "H.",
      { m: "x" },
      { buckets: [0.5, 1], counts: [1, 2, 3], sum: 7.5, count: 6 },
    );
    assert.equal(
      w.text(),
      [
        "# HELP h H.",
        "# TYPE h histogram",
        'h_bucket{le="0.5",m="x"} 1.0',
        'h_bucket{le="1.0",m="x"} 3.0',
        'h_bucket{le="+Inf",m="x"} 6.0',
        'h_count{m="x"} 6.0',
        'h_sum{m="x"} 7.5',
        "# HELP h_created H.",
        "# TYPE h_created gauge",
        'h_created{m="x"} 1.0',
        "",
      ].join("\n"),
    );
  });

  it("in multi-process mode drops _created and puts a histogram's _sum first", () => {
    const w = createExpositionWriter({ created: 1, multiprocess: true });
    w.counter("c", "C.", [[{}, 1]]);
    w.histogram("h", "H.", {}, { buckets: [1], counts: [0, 0], sum: 0, count: 0 });
    const text = w.text();
    assert.doesNotMatch(text, /_created/);
    assert.match(text, /# TYPE h histogram\nh_sum 0\.0\nh_bucket\{le="1\.0"\} 0\.0\n/);
  });
});
