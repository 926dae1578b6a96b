/**
 * What the soak prints: its header (the run, the mix, the router's settings, the faults) and,
 * once it is over, its tables (the measures, the cells, the faults, the invariants) and its
 * JSON. Pure: the run gathers an outcome while its processes are up, these write it.
 */
import { markdownTable } from "../markdown-table.ts";
import { percentile } from "../percentile.ts";
import type { RunRecords } from "../records.ts";
import type { Sample } from "./chart.ts";
import type { CpuSets } from "./cpus.ts";
import type { FaultRun } from "./faults.ts";
import { INVARIANTS, inAnyWindow, type Violation } from "./invariants.ts";
import { CELL_FAULT_KINDS, FAULT_KINDS, type Fault } from "./schedule.ts";
import type { SoakSettings } from "./spec.ts";
import { sinceText } from "./state.ts";

const MS = 1000;
const HOUR_MS = 3_600_000;

/** The lines said before load starts (the last one ends with a blank line). */
export function soakHeader(
  s: SoakSettings,
  schedule: readonly Fault[],
  logFile: string,
  cpus: CpuSets | null,
): string[] {
  const cells = s.cells > 0 ? `${s.cells} cells behind HAProxy, each with ` : "";
  const kinds = [...FAULT_KINDS, ...(s.cells >= 2 ? CELL_FAULT_KINDS : [])];
  const pinned =
    cpus === null
      ? ""
      : `; router on CPU ${cpus.router}, the soak, backends and HAProxy on ${cpus.others}`;
  return [
    `soak: ${s.text.minutes} min at time scale ${s.timeScale} (~${((s.durationMs * s.timeScale) / HOUR_MS).toFixed(1)} simulated hours), router ${s.router}, ${cells}${s.backendsPerRouter} sim-backends (${s.text.numGpuBlocks} blocks each), seed ${s.seed}`,
    `mix: ${s.concurrency} slots: DeepSeek trace ${s.traceShare / 2}, Gemini trace ${s.traceShare / 2}, short programs ${1 - s.traceShare} (1–3 calls, 300–800 prompt tokens, 8–32 out); ${Math.round(s.streamShare * 100)} % streamed; ${Math.round(s.unreleased * 100)} % never released; bursts of ${s.burst}; no client retries`,
    `router: --scheduler-interval ${s.tickMs / MS} --poll-timeout ${s.pollTimeoutMs / MS} --idle-timeout ${s.idleTimeoutMs / MS} --max-pause ${s.maxPauseMs / MS} (wall seconds); no config reload is injected: maitred has none (no SIGHUP)${pinned}`,
    `faults: ${schedule.length} (${kinds.map((k) => `${k} ×${schedule.filter((f) => f.kind === k).length}`).join(", ")}); log ${logFile}\n`,
  ];
}

/** One cell's figures at the end (read while its process was up). */
export interface CellOutcome {
  name: string;
  /** Programs it still knew once the fleet drained. */
  left: number;
  /** CPU seconds, its killed processes' included. */
  cpuS: number;
  restarts: number;
}

/** Everything the tables and the JSON are written from. */
export interface SoakOutcome {
  timeScale: number;
  cells: number;
  baselineMs: number;
  graceMs: number;
  t0: number;
  /** When load stopped (epoch ms). */
  loadEnd: number;
  records: RunRecords;
  /** Programs the probes and bursts started. */
  programsSeen: number;
  /** Chat completions sent. */
  requests: number;
  samples: Sample[];
  runs: FaultRun[];
  cellNames: string[];
  /** Failed requests each fault explains, by fault id. */
  explained: Map<number, number>;
  /** Failures in the access log, and how many of them no fault explains. */
  routerFailures: number;
  unexplained: number;
  /** With cells: HAProxy's CPU seconds and its retries on another cell; each cell's figures. */
  haproxy: { cpuS: number | null; retried: number } | null;
  cellOutcomes: CellOutcome[];
  drift: number;
  violations: Violation[];
}

const fmt = (v: number | null, d = 1) => (v === null ? "n/a" : v.toFixed(d));

/** The sample the RSS baseline is read from: past `baselineMs`, every cell up. */
export function baselineSample(samples: readonly Sample[], baselineMs: number): Sample {
  // The baseline has every cell up (a cell down would take its memory out of the sum).
  const allUp = (s: Sample) => s.cells.every((c) => c.rss_mb !== null);
  return (
    samples.find((s) => s.t_s * MS >= baselineMs && s.rss_mb !== null && allUp(s)) ?? samples[0]
  );
}

/**
 * The measures table's rows. `samplingMs` is the router's event-loop monitor's own sampling
 * interval, which an idle router reads as delay: the script passes it, as the bench does not
 * reach into src/metrics.
 */
export function measureRows(o: SoakOutcome, samplingMs: number): string[][] {
  const { records, samples } = o;
  const programs = records.programs.length + (records.subagents?.length ?? 0) + o.programsSeen;
  const warm = baselineSample(samples, o.baselineMs);
  const end = samples[samples.length - 1];
  const liveMax = Math.max(1, ...samples.map((s) => s.live_programs));
  const lags = samples.map((s) => s.lag_p99_ms).filter((v): v is number => v !== null);
  const cpuUs = end.cpu_s === null ? null : (end.cpu_s * 1e6) / Math.max(1, o.requests);
  const windows = (kind: string) =>
    o.runs.filter((x) => x.fault.kind === kind).map((x) => x.window);
  const cellKills = windows("kill-cell");
  const cut = records.errors.filter((e) => e.kind === "stream_error");
  const lost = records.errors.length - cut.length;
  const wallMs = o.loadEnd - o.t0;
  const rows: string[][] = [];
  const row = (k: string, v: string | number) => rows.push([k, String(v)]);
  row(
    "wall time / simulated time",
    `${(wallMs / 60_000).toFixed(1)} min / ${((wallMs * o.timeScale) / HOUR_MS).toFixed(1)} h`,
  );
  row("programs seen (closed loop + sub-agents + bursts + probes)", programs);
  row(
    "programs completed by the closed loop",
    records.programs.filter((p) => p.outcome === "completed").length,
  );
  row("programs per wall second", (programs / (wallMs / MS)).toFixed(1));
  row("steps answered", records.steps.length);
  row("requests sent (chat completions)", o.requests);
  row(
    "driver failures: lost (before any byte) / streams cut mid-answer",
    `${lost} / ${cut.length}`,
  );
  const during = (ws: readonly { startMs: number; endMs: number }[]) =>
    records.errors.filter((e) => inAnyWindow(o.t0 + e.atMs, ws, o.graceMs)).length;
  row("  of which during a backend kill window", during(windows("kill")));
  if (cellKills.length > 0) row("  of which during a cell kill window", during(cellKills));
  row("router failures in the access log (5xx, error events)", o.routerFailures);
  row(
    "  explained by a fault / unexplained",
    `${o.routerFailures - o.unexplained} / ${o.unexplained}`,
  );
  row(
    `RSS after warm-up (${warm.t_s.toFixed(0)} s) / at the end (MB)`,
    `${fmt(warm.rss_mb)} / ${fmt(end.rss_mb)}`,
  );
  row(
    "RSS end ÷ after warm-up",
    warm.rss_mb && end.rss_mb ? (end.rss_mb / warm.rss_mb).toFixed(2) : "n/a",
  );
  row(
    "RSS per live program at the peak (KB)",
    fmt((Math.max(...samples.map((s) => s.rss_mb ?? 0)) * 1024) / liveMax),
  );
  row(
    "RSS per program seen, at the end (KB)",
    fmt(((end.rss_mb ?? 0) * 1024) / Math.max(1, programs)),
  );
  row("peak live programs", liveMax);
  row("heap used at the end (MB)", fmt(end.heap_mb));
  const heaps = samples.map((s) => s.heap_mb).filter((v): v is number => v !== null);
  row(
    "heap used over the run, lowest / highest sample (MB)",
    heaps.length === 0 ? "n/a" : `${fmt(Math.min(...heaps))} / ${fmt(Math.max(...heaps))}`,
  );
  // Each sample is the p99 of the delays since the previous scrape (prom-client resets its
  // histogram on every collection): the median sample is the usual window, the worst the worst.
  // The monitor's own sampling interval is taken out: an idle router reads that much.
  const sortedLags = lags.map((x) => Math.max(0, x - samplingMs)).sort((x, y) => x - y);
  row(
    `event-loop delay p99 of a sample window, beyond the ${samplingMs} ms sampling interval: median / p90 / worst (ms)`,
    lags.length === 0
      ? "n/a"
      : [50, 90, 100].map((q) => percentile(sortedLags, q).toFixed(1)).join(" / "),
  );
  row(`router CPU per request (µs${o.cells > 0 ? ", all cells" : ""})`, fmt(cpuUs, 0));
  if (o.haproxy !== null) {
    const hapCpu = o.haproxy.cpuS;
    row(
      "HAProxy CPU per request (µs)",
      fmt(hapCpu === null ? null : (hapCpu * 1e6) / Math.max(1, o.requests), 0),
    );
    row("requests HAProxy retried on another cell", o.haproxy.retried);
  }
  return rows;
}

/** Per cell: RSS after the warm-up and at the end, peak live programs, left, CPU, restarts. */
function cellTable(o: SoakOutcome): string {
  const warm = baselineSample(o.samples, o.baselineMs);
  const end = o.samples[o.samples.length - 1];
  const rows = o.cellOutcomes.map((c, i) => [
    c.name,
    `${fmt(warm.cells[i].rss_mb)} / ${fmt(end.cells[i].rss_mb)}`,
    String(Math.max(0, ...o.samples.map((s) => s.cells[i].live_programs))),
    String(c.left),
    c.cpuS.toFixed(1),
    String(c.restarts),
  ]);
  const head = [
    "cell",
    "RSS after warm-up / at the end (MB)",
    "peak live programs",
    "programs left",
    "CPU (s)",
    "restarts",
  ];
  return markdownTable(head, rows);
}

function faultTable(o: SoakOutcome): string {
  const rows = o.runs.map((x) => [
    x.fault.kind,
    String(x.fault.backend ?? (x.fault.cell === null ? "" : o.cellNames[x.fault.cell])),
    sinceText(o.t0, x.window.startMs),
    `${x.fault.lengthMs} ms`,
    String(x.done),
    String(o.explained.get(x.window.id) ?? 0),
    x.note,
  ]);
  const head = ["fault", "backend / cell", "at", "length", "done", "failures it explains", "note"];
  return markdownTable(head, rows, ["fault", "note"]);
}

function invariantTable(o: SoakOutcome): string {
  const rows = INVARIANTS.map((inv) => {
    const n = o.violations.filter((v) => v.invariant === inv).length;
    const note =
      inv === "books" && o.drift !== 0
        ? ` (rounding residue up to ${o.drift.toExponential(1)} tokens)`
        : "";
    return [inv, `${n === 0 ? "ok" : `**${n} violation(s)**`}${note}`];
  });
  return markdownTable(["invariant", "result"], rows, 2);
}

/** The blocks printed once the soak is over, each after a blank line. */
export function soakReport(o: SoakOutcome, samplingMs: number): string[] {
  const blocks = [`\n${markdownTable(["measure", "value"], measureRows(o, samplingMs))}`];
  if (o.haproxy !== null) blocks.push(`\n${cellTable(o)}`);
  blocks.push(`\n${faultTable(o)}`, `\n${invariantTable(o)}`);
  const kinds = new Map<string, number>();
  for (const e of o.records.errors) kinds.set(e.kind, (kinds.get(e.kind) ?? 0) + 1);
  if (kinds.size > 0)
    blocks.push(`\ndriver failures by kind: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(", ")}`);
  return blocks;
}

/** `--json`: the samples, the faults (what each did and explains) and the violations. */
export function soakJson(o: SoakOutcome): string {
  const faults = o.runs.map((x) => ({
    ...x.fault,
    done: x.done,
    explains: o.explained.get(x.window.id) ?? 0,
  }));
  return `${JSON.stringify({ samples: o.samples, faults, violations: o.violations }, null, 1)}\n`;
}
