import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  type Agreement,
  type AgreementArgs,
  agreementJson,
  agreementLines,
  gapOf,
  sideOf,
  simulateFlags,
} from "../../../src/bench/scenarios/agreement.ts";

const args: AgreementArgs = {
  workload: "deepseek",
  concurrency: "32",
  backends: "2",
  "num-gpu-blocks": undefined,
  warmup: "1m",
  duration: "5m",
  seed: "1",
  json: undefined,
};

describe("bench:agreement's two sides", () => {
  it("takes default's and tr's steps/min from a comparison's runs, NaN for one not run", () => {
    const runs = [
      { router: "tr", steps_per_min: 120 },
      { router: "direct", steps_per_min: 90 },
      { router: "default", steps_per_min: 100 },
    ];
    assert.deepEqual(sideOf(runs), { default: 100, tr: 120 });
    assert.ok(Number.isNaN(sideOf(runs.slice(0, 2)).default));
  });

  it("runs simulate with the same configuration, the KV size only when given", () => {
    assert.deepEqual(simulateFlags(args), {
      router: "default,tr",
      workload: "deepseek",
      concurrency: "32",
      numBackends: "2",
      warmup: "1m",
      duration: "5m",
      seed: "1",
    });
    assert.equal(simulateFlags({ ...args, "num-gpu-blocks": "4000" }).numGpuBlocks, "4000");
  });

  it("the gap is zero when the ratios agree, whatever the sides' absolute rates", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 1e4, noNaN: true }),
        fc.double({ min: 0.1, max: 10, noNaN: true }),
        fc.double({ min: 0.1, max: 10, noNaN: true }),
        (base, ratio, scale) => {
          const sim = { default: base, tr: base * ratio };
          const http = { default: base * scale, tr: base * ratio * scale };
          assert.ok(Math.abs(gapOf(http, sim)) < 1e-9);
        },
      ),
    );
    assert.ok(Math.abs(gapOf({ default: 100, tr: 220 }, { default: 100, tr: 200 }) - 0.1) < 1e-12);
  });
});

describe("bench:agreement's printing", () => {
  const result = (httpTr: number): Agreement => {
    const http = { default: 100, tr: httpTr };
    const simulate = { default: 50, tr: 100 };
    return {
      http,
      simulate,
      gap: gapOf(http, simulate),
      httpWallMs: 61_400,
      simulateWallMs: 2_600,
    };
  };

  it("prints the configuration, both sides in a table, and agreement within 15 %", () => {
    assert.deepEqual(agreementLines(args, result(210)), [
      "tr ÷ default over HTTP and in simulate: deepseek, 32 programs, 2 backends × the profile's blocks, warm-up 1m, window 5m, seed 1",
      [
        "|  | default steps/min | tr steps/min | tr ÷ default | wall time |",
        "| --- | ---: | ---: | ---: | ---: |",
        "| over HTTP (virtual clock) | 100.0 | 210.0 | 2.10 | 61 s |",
        "| simulate | 50.0 | 100.0 | 2.00 | 3 s |",
      ].join("\n"),
      "ratios differ by 5.0 % (agreement within 15 %: yes)",
    ]);
  });

  it("says NO past 15 % either way, and names the KV size when given", () => {
    assert.match(agreementLines(args, result(240)).at(-1) ?? "", /by 20\.0 % .*: NO\)$/);
    assert.match(agreementLines(args, result(160)).at(-1) ?? "", /by -20\.0 % .*: NO\)$/);
    const lines = agreementLines({ ...args, "num-gpu-blocks": "4000" }, result(200));
    assert.match(lines[0], /2 backends × 4000 blocks/);
  });

  it("writes the flags, both sides and the gap as JSON", () => {
    const r = result(200);
    assert.deepEqual(JSON.parse(agreementJson(args, r)), {
      args: {
        workload: "deepseek",
        concurrency: "32",
        backends: "2",
        warmup: "1m",
        duration: "5m",
        seed: "1",
      },
      http: r.http,
      simulate: r.simulate,
      gap: 0,
    });
  });
});
