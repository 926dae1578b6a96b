import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseScriptArgs } from "../../../src/bench/script-args.ts";
import type { Sample } from "../../../src/bench/soak/chart.ts";
import { faultRuns } from "../../../src/bench/soak/faults.ts";
import {
  baselineSample,
  measureRows,
  type SoakOutcome,
  soakHeader,
  soakJson,
  soakReport,
} from "../../../src/bench/soak/report.ts";
import type { Fault } from "../../../src/bench/soak/schedule.ts";
import { SOAK_SPEC, soakSettings } from "../../../src/bench/soak/spec.ts";

const settingsOf = (argv: string[]) => {
  const r = parseScriptArgs(SOAK_SPEC, argv);
  if (r.help) throw new Error("asked for help");
  return soakSettings(r);
};

const sample = (t_s: number, rss: number | null, over: Partial<Sample> = {}): Sample => ({
  t_s,
  rss_mb: rss,
  cpu_s: t_s / 10,
  heap_mb: 40,
  lag_p99_ms: 30,
  live_programs: 10,
  programs_seen: 100,
  requests: 1_000,
  cells: [{ name: "router", rss_mb: rss, live_programs: 10 }],
  ...over,
});

const faults: Fault[] = [
  { kind: "kill", atMs: 10_000, lengthMs: 5_000, backend: 0, cell: null },
  { kind: "burst", atMs: 30_000, lengthMs: 5_000, backend: null, cell: null },
];

function outcome(over: Partial<SoakOutcome> = {}): SoakOutcome {
  const runs = faultRuns(faults, 1_000_000, ["http://b0", "http://b1"]);
  runs[0].done = 1;
  runs[1].note = "a note";
  return {
    timeScale: 72,
    cells: 0,
    baselineMs: 20_000,
    graceMs: 1_000,
    t0: 1_000_000,
    loadEnd: 1_060_000,
    records: {
      steps: [],
      programs: [
        { programId: "a", launchMs: 0, outcome: "completed" },
        { programId: "b", launchMs: 0, outcome: "failed" },
      ],
      errors: [
        // During the kill window (10–15 s, and a second of grace), then after it.
        { programId: "b", stepIndex: 0, atMs: 15_500, kind: "http_502" },
        { programId: "c", stepIndex: 0, atMs: 40_000, kind: "stream_error" },
      ],
      endMs: 60_000,
    },
    programsSeen: 8,
    requests: 2_000,
    samples: [sample(5, 100), sample(25, 120), sample(55, 150)],
    runs,
    cellNames: ["router"],
    explained: new Map([[0, 3]]),
    routerFailures: 4,
    unexplained: 1,
    haproxy: null,
    cellOutcomes: [{ name: "router", left: 0, cpuS: 5.5, restarts: 0 }],
    drift: 0,
    violations: [],
    ...over,
  };
}

describe("the soak's header", () => {
  it("says the run, the mix, the router's settings and the faults by kind", () => {
    const s = settingsOf(["--minutes", "1", "--cells", "2", "--router-cpus", "1"]);
    const lines = soakHeader(s, faults, "/tmp/r.log", { router: "1", others: "0" });
    assert.equal(
      lines[0],
      "soak: 1 min at time scale 72 (~1.2 simulated hours), router tr, 2 cells behind HAProxy, each with 2 sim-backends (6000 blocks each), seed 1",
    );
    assert.match(
      lines[1],
      /^mix: 96 slots: DeepSeek trace 0.05, Gemini trace 0.05, short programs 0.9 /,
    );
    assert.match(lines[1], /25 % streamed; 30 % never released; bursts of 200; no client retries$/);
    assert.match(
      lines[2],
      /^router: --scheduler-interval 1 --poll-timeout 2 --idle-timeout 45 --max-pause 300 \(wall seconds\)/,
    );
    assert.match(lines[2], /; router on CPU 1, the soak, backends and HAProxy on 0$/);
    assert.match(
      lines[3],
      /^faults: 2 \(kill ×1, stop ×0, .*burst ×1, kill-cell ×0\); log \/tmp\/r.log\n$/,
    );
  });

  it("leaves the cells and the pinning out when there are none", () => {
    const lines = soakHeader(settingsOf([]), [], "/tmp/r.log", null);
    assert.match(lines[0], /router tr, 2 sim-backends/);
    assert.match(lines[2], /\(no SIGHUP\)$/);
    assert.ok(!lines[3].includes("kill-cell"), "a lone router has no cell to kill");
  });
});

describe("the soak's tables", () => {
  it("reads the RSS baseline past the idle timeout, with every cell up", () => {
    const ss = [
      sample(5, 100),
      sample(25, 120, { cells: [{ name: "a", rss_mb: null, live_programs: 0 }] }),
      sample(30, 130),
    ];
    assert.equal(baselineSample(ss, 20_000).t_s, 30, "a cell down at 25 s");
    assert.equal(baselineSample(ss, 99_000).t_s, 5, "none past it: the first");
  });

  it("gives the measures: programs, failures in the kill windows, memory, CPU per request", () => {
    const rows = new Map(measureRows(outcome(), 10).map(([k, v]) => [k, v]));
    assert.equal(rows.get("wall time / simulated time"), "1.0 min / 1.2 h");
    assert.equal(rows.get("programs seen (closed loop + sub-agents + bursts + probes)"), "10");
    assert.equal(rows.get("programs completed by the closed loop"), "1");
    assert.equal(
      rows.get("driver failures: lost (before any byte) / streams cut mid-answer"),
      "1 / 1",
    );
    assert.equal(rows.get("  of which during a backend kill window"), "1");
    assert.ok(!rows.has("  of which during a cell kill window"), "no cell was killed");
    assert.equal(rows.get("  explained by a fault / unexplained"), "3 / 1");
    assert.equal(rows.get("RSS after warm-up (25 s) / at the end (MB)"), "120.0 / 150.0");
    assert.equal(rows.get("RSS end ÷ after warm-up"), "1.25");
    // 5.5 CPU seconds at the end over 2,000 requests.
    assert.equal(rows.get("router CPU per request (µs)"), "2750");
    assert.equal(
      rows.get(
        "event-loop delay p99 of a sample window, beyond the 10 ms sampling interval: median / p90 / worst (ms)",
      ),
      "20.0 / 20.0 / 20.0",
    );
    assert.ok(!rows.has("HAProxy CPU per request (µs)"));
  });

  it("adds HAProxy's figures and a table of the cells behind it", () => {
    const cellSample = (t: number) =>
      sample(t, 300, {
        cells: [
          { name: "cell-a", rss_mb: 140, live_programs: 4 },
          { name: "cell-b", rss_mb: 160, live_programs: 9 },
        ],
      });
    const o = outcome({
      cells: 2,
      samples: [cellSample(25), cellSample(55)],
      haproxy: { cpuS: 1, retried: 7 },
      cellOutcomes: [
        { name: "cell-a", left: 0, cpuS: 3.25, restarts: 1 },
        { name: "cell-b", left: 2, cpuS: 2, restarts: 0 },
      ],
    });
    const rows = new Map(measureRows(o, 10).map(([k, v]) => [k, v]));
    assert.equal(rows.get("HAProxy CPU per request (µs)"), "500");
    assert.equal(rows.get("requests HAProxy retried on another cell"), "7");
    assert.ok(rows.has("router CPU per request (µs, all cells)"));
    const blocks = soakReport(o, 10);
    assert.match(blocks[1], /\| cell-a \| 140\.0 \/ 140\.0 \| 4 \| 0 \| 3\.3 \| 1 \|/);
    assert.match(blocks[1], /\| cell-b \| 160\.0 \/ 160\.0 \| 9 \| 2 \| 2\.0 \| 0 \|/);
  });

  it("lists the faults, the invariants' results and the driver's failures by kind", () => {
    const o = outcome({
      drift: 3.6e-12,
      violations: [
        { atMs: 0, invariant: "access-log", detail: "x" },
        { atMs: 0, invariant: "access-log", detail: "y" },
      ],
    });
    const blocks = soakReport(o, 10);
    assert.equal(blocks.length, 4, "measures, faults, invariants, failures by kind");
    assert.ok(blocks.every((b) => b.startsWith("\n")));
    assert.match(blocks[1], /\| kill \| 0 \| 10\.0 s \| 5000 ms \| 1 \| 3 \| {2}\|/);
    assert.match(blocks[1], /\| burst \| {2}\| 30\.0 s \| 5000 ms \| 0 \| 0 \| a note \|/);
    assert.match(blocks[2], /\| books \| ok \(rounding residue up to 3\.6e-12 tokens\) \|/);
    assert.match(blocks[2], /\| access-log \| \*\*2 violation\(s\)\*\* \|/);
    assert.equal(blocks[3], "\ndriver failures by kind: http_502 1, stream_error 1");
    const quiet = soakReport(outcome({ records: { ...o.records, errors: [] } }), 10);
    assert.equal(quiet.length, 3, "no failures, no line for them");
  });

  it("writes the samples, each fault with what it did and explains, and the violations", () => {
    const json = JSON.parse(soakJson(outcome()));
    assert.deepEqual(Object.keys(json), ["samples", "faults", "violations"]);
    assert.equal(json.samples.length, 3);
    assert.deepEqual(json.faults[0], { ...faults[0], done: 1, explains: 3 });
    assert.deepEqual(json.faults[1], { ...faults[1], done: 0, explains: 0 });
  });
});
