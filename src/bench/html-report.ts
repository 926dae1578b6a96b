/**
 * `--html FILE` of `bench`, `bench compare` and `simulate`: one self-contained page (uPlot and
 * the data inlined; it opens from disk, offline) with the comparison table, steps per minute
 * per run, the step-latency CDF, the program-completion-time CDF, KV usage over time per
 * backend (when the run recorded it: the simulator does, and `bench compare` samples its
 * simulated backends), and a pause timeline per program (a strip per program: held by the
 * router, running on the engine, and the gaps between are its tool calls).
 */
import { readFileSync } from "node:fs";
import { inWindow, type Window } from "./class-report.ts";
import type { KvSeries } from "./kv-sampler.ts";
import { completionTimes } from "./program-completion.ts";
import type { RunRecords } from "./records.ts";
import type { RunReport } from "./report.ts";
import { escapeXml } from "./svg-chart.ts";

export interface HtmlRun {
  report: RunReport;
  records: RunRecords;
  /** KV usage per backend over the run (seconds; 0..1), when it was recorded. */
  kv?: KvSeries | null;
}

/** Programs drawn in a run's timeline: the first to launch. */
const TIMELINE_PROGRAMS = 40;
/** Points of each CDF. */
const CDF_POINTS = 200;
const PALETTE = ["#2f5fb3", "#c0392b", "#1a7f37", "#8e44ad", "#d35400", "#16a085", "#7f8c8d"];

const label = (r: RunReport) => `${r.router} · C=${r.concurrency}`;
const fmt = (v: number | null | undefined, digits = 0) =>
  v === null || v === undefined ? "–" : v.toLocaleString("en", { maximumFractionDigits: digits });

/**
 * The run's steady window as its report gives it (whole ms), its end included: the report does
 * not say whether the run's end closed it, and a value ending on that very ms is rare.
 */
const windowOf = (r: RunReport): Window => ({
  startMs: r.window_ms.start,
  endMs: r.window_ms.end,
  closed: true,
});

/** Step latencies (s) the table's percentiles count: those of steps ended in the window. */
const stepLatencies = ({ report, records }: HtmlRun) =>
  records.steps
    .filter((s) => inWindow(s.endMs, windowOf(report)))
    .map((s) => (s.endMs - s.startMs) / 1000);

/** Completion times (s) the table's percentiles count: programs completed in the window. */
const completionSeconds = ({ report, records }: HtmlRun) =>
  completionTimes(records.programs, windowOf(report)).map((ms) => ms / 1000);

/** Share of each run's values at or under points spread log-evenly over all of them. */
function cdf(samples: readonly number[][]): { x: number[]; y: number[][] } {
  const sorted = samples.map((values) => [...values].sort((a, b) => a - b));
  let min = Number.POSITIVE_INFINITY;
  let max = 0;
  for (const values of sorted)
    for (const v of values) {
      if (v > 0 && v < min) min = v;
      if (v > max) max = v;
    }
  if (max === 0) return { x: [], y: samples.map(() => []) };
  const lo = Math.log(min);
  // One latency only: a short span around it, so the step still draws.
  const hi = max > min ? Math.log(max) : lo + 0.01;
  const x = Array.from({ length: CDF_POINTS }, (_, i) =>
    Math.exp(lo + ((hi - lo) * i) / (CDF_POINTS - 1)),
  );
  // The ends exactly the shortest and the longest, never a rounding off them.
  x[0] = min;
  x[CDF_POINTS - 1] = Math.max(max, x[CDF_POINTS - 1] as number);
  const y = sorted.map((values) => {
    let k = 0;
    return x.map((v) => {
      while (k < values.length && (values[k] as number) <= v) k++;
      return values.length === 0 ? 0 : k / values.length;
    });
  });
  return { x, y };
}

/** A strip per program: held (orange), running (blue); blank between steps = its tool calls. */
function timelineSvg(run: HtmlRun): string {
  const programs = [...run.records.programs]
    .sort((a, b) => a.launchMs - b.launchMs)
    .slice(0, TIMELINE_PROGRAMS);
  const endMs = Math.max(1, run.records.endMs);
  const width = 1000;
  const rowH = 10;
  const left = 90;
  const x = (ms: number) => left + ((width - left - 10) * ms) / endMs;
  const rows = new Map(programs.map((p, i) => [p.programId, i]));
  const rects: string[] = [];
  for (const s of run.records.steps) {
    const row = rows.get(s.programId);
    if (row === undefined) continue;
    const y = 20 + row * (rowH + 2);
    const held = s.startMs + s.pausedMs;
    if (s.pausedMs > 0)
      rects.push(
        `<rect x="${x(s.startMs).toFixed(1)}" y="${y}" width="${Math.max(0.5, x(held) - x(s.startMs)).toFixed(1)}" height="${rowH}" fill="#d35400"/>`,
      );
    rects.push(
      `<rect x="${x(held).toFixed(1)}" y="${y}" width="${Math.max(0.5, x(s.endMs) - x(held)).toFixed(1)}" height="${rowH}" fill="#2f5fb3"/>`,
    );
  }
  const labels = programs.map(
    (p, i) =>
      `<text x="${left - 6}" y="${20 + i * (rowH + 2) + rowH - 1}" text-anchor="end">${escapeXml(p.programId.slice(-14))}</text>`,
  );
  const height = 30 + programs.length * (rowH + 2);
  const ticks: string[] = [];
  for (let i = 0; i <= 5; i++) {
    const ms = (endMs * i) / 5;
    const digits = endMs < 20_000 ? 1 : 0; // short runs: ticks a second or less apart
    ticks.push(
      `<text x="${x(ms).toFixed(1)}" y="12" text-anchor="middle">${(ms / 1000).toFixed(digits)} s</text>`,
    );
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="100%" font-size="9" font-family="system-ui, sans-serif">${ticks.join("")}${labels.join("")}${rects.join("")}</svg>`;
}

/** A figure in ms shown in seconds. */
const secs = (ms: number | null | undefined, digits: number) =>
  fmt(ms === null || ms === undefined ? null : ms / 1000, digits);

function table(runs: readonly HtmlRun[]): string {
  const batched = runs.some((r) => r.report.batch !== undefined);
  const head = [
    "run",
    "workload",
    "steps/min",
    "steps",
    "step p50 (s)",
    "p95 (s)",
    "p99 (s)",
    "TTFT p50 (s)",
    "longest hold (s)",
    "cache hit",
    "errors",
    "programs completed",
    "completion p50 (s)",
    "p95 (s)",
    "max (s)",
    ...(batched ? ["batch makespan (s)"] : []),
  ];
  const rows = runs.map(({ report: r }) => {
    const c = r.program_completion_ms;
    const cells = [
      label(r),
      r.workload,
      fmt(r.steps_per_min, 1),
      fmt(r.steps_completed),
      secs(r.step_latency_ms.p50, 2),
      secs(r.step_latency_ms.p95, 2),
      secs(r.step_latency_ms.p99, 2),
      secs(r.ttft_ms.p50, 2),
      secs(r.paused_ms.per_step_max, 1),
      r.prompt_tokens.cache_hit_rate === null
        ? "–"
        : `${(100 * r.prompt_tokens.cache_hit_rate).toFixed(1)} %`,
      fmt(r.errors_total),
      fmt(c.count),
      secs(c.p50, 1),
      secs(c.p95, 1),
      secs(c.max, 1),
      ...(batched ? [secs(r.batch?.makespan_ms, 1)] : []),
    ];
    return `<tr>${cells.map((c, i) => `<td${i > 1 ? ' class="num"' : ""}>${escapeXml(c)}</td>`).join("")}</tr>`;
  });
  return `<table><thead><tr>${head.map((h) => `<th>${h}</th>`).join("")}</tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function bars(runs: readonly HtmlRun[]): string {
  const max = Math.max(1, ...runs.map((r) => r.report.steps_per_min));
  return runs
    .map(
      ({ report: r }, i) =>
        `<div class="barrow"><span class="barlabel">${escapeXml(label(r))}</span><span class="bar" style="width:${((60 * r.steps_per_min) / max).toFixed(1)}%;background:${PALETTE[i % PALETTE.length]}"></span><span class="barvalue">${fmt(r.steps_per_min, 1)}</span></div>`,
    )
    .join("");
}

/** Inline data for the page's script: JSON that cannot close the script element. */
const scriptJson = (v: unknown) => JSON.stringify(v).replaceAll("<", "\\u003c");

export function renderHtmlReport(runs: readonly HtmlRun[], title: string): string {
  const uplotJs = readFileSync(
    new URL(import.meta.resolve("uplot/dist/uPlot.iife.min.js")),
    "utf8",
  );
  const uplotCss = readFileSync(new URL(import.meta.resolve("uplot/dist/uPlot.min.css")), "utf8");
  const latency = cdf(runs.map(stepLatencies));
  const completion = cdf(runs.map(completionSeconds));
  // A run whose sampled /metrics never gave a figure (not exported, unreachable, behind a
  // token) has nothing to chart: it is said so below instead of drawing an empty chart.
  const kv = runs.map((r) =>
    r.kv?.backends.some((b) => b.kv_usage.some((v) => v !== null)) ? r.kv : null,
  );
  const data = {
    labels: runs.map((r) => label(r.report)),
    palette: PALETTE,
    cdf: latency,
    completion,
    kv,
  };
  const kvSections = runs
    .map((r, i) =>
      kv[i]
        ? `<figure><figcaption>${escapeXml(label(r.report))}</figcaption><div id="kv-${i}"></div></figure>`
        : "",
    )
    .join("");
  const timelines = runs
    .map(
      (r) =>
        `<figure><figcaption>${escapeXml(label(r.report))}: the first ${Math.min(TIMELINE_PROGRAMS, r.records.programs.length)} programs</figcaption>${timelineSvg(r)}</figure>`,
    )
    .join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeXml(title)}</title>
<style>${uplotCss}
body{font-family:system-ui,sans-serif;font-size:14px;margin:24px;color:#1d1d1f;max-width:1200px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse}th,td{padding:4px 10px;border-bottom:1px solid #ddd;text-align:left;white-space:nowrap}
td.num{text-align:right;font-variant-numeric:tabular-nums}th{color:#666;font-weight:500;font-size:12px}
figure{margin:12px 0}figcaption{color:#666;font-size:12px;margin-bottom:4px}
.barrow{display:flex;align-items:center;gap:8px;margin:4px 0}.barlabel{width:180px}.bar{height:14px;border-radius:3px}
.legend{color:#666;font-size:12px}.legend b{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}
</style></head><body>
<h1>${escapeXml(title)}</h1>
<h2>Runs</h2>${table(runs)}
<h2>Steps per minute</h2>${bars(runs)}
<h2>Step latency (CDF)</h2><div id="cdf"></div>
<h2>Program completion time (CDF)</h2><p class="legend">First request to release (a program never released: the end of its last step), over the programs completed in the steady window, whatever their start; programs still running at the end are left out.</p>${completion.x.length > 0 ? "" : '<p class="legend">No program completed in the steady window.</p>'}<div id="completion"></div>
<h2>KV usage per backend over time</h2><p class="legend">Share of each backend's GPU KV blocks in use; dashed, the share of its host KV tier in use, where the run knows it (the simulator does; vLLM exports no such gauge).</p>${kvSections || '<p class="legend">Not recorded in these runs: no KV usage could be read from the <code>/metrics</code> they sampled (not exported, not reachable, or behind a token).</p>'}
<h2>Pause timeline per program</h2><p class="legend"><b style="background:#d35400"></b>held by the router<b style="background:#2f5fb3"></b>running on the engine; blank between steps: tool calls</p>${timelines}
<script>${uplotJs}</script>
<script>
const D = ${scriptJson(data)};
const W = Math.min(1150, document.body.clientWidth);
const cdfPlot = (c, id, x, y) => { if (c.x.length > 0) new uPlot({ width: W, height: 300, scales: { x: { distr: 3, time: false }, y: { range: [0, 1] } },
  axes: [{ label: x }, { label: y, size: 60 }],
  series: [{}].concat(D.labels.map((l, i) => ({ label: l, stroke: D.palette[i % D.palette.length], width: 2 }))) },
  [c.x].concat(c.y), document.getElementById(id)); };
cdfPlot(D.cdf, "cdf", "step latency (s)", "share of steps");
cdfPlot(D.completion, "completion", "program completion time (s)", "share of programs");
D.kv.forEach((kv, i) => { if (!kv) return;
  // A backend's host KV tier, when the run knows it, is drawn dashed in the backend's colour.
  const lines = kv.backends.flatMap((b, j) => [{ label: b.id + " GPU", values: b.kv_usage, j, dash: null }]
    .concat(b.host_usage ? [{ label: b.id + " host tier", values: b.host_usage, j, dash: [6, 4] }] : []));
  new uPlot({ width: W, height: 220, scales: { x: { time: false }, y: { range: [0, 1] } },
    axes: [{ label: "s" }, { size: 60, values: (u, t) => t.map((v) => Math.round(v * 100) + " %") }],
    series: [{}].concat(lines.map((l) => ({ label: l.label, stroke: D.palette[l.j % D.palette.length], width: 1.5, dash: l.dash || undefined }))) },
    [kv.t_s].concat(lines.map((l) => l.values)), document.getElementById("kv-" + i)); });
</script>
</body></html>
`;
}
