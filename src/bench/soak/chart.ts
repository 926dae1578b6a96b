/**
 * The soak's samples (`npm run soak`, taken by sampler.ts) and the chart it draws of them with
 * `--svg`: the router's memory, CPU and event-loop delay over the run.
 */
import { lineChart, stackCharts } from "../svg-chart.ts";

/** One sample; memory, CPU and programs summed over the cells (each cell's in `cells`). */
export interface Sample {
  t_s: number;
  rss_mb: number | null;
  cpu_s: number | null;
  heap_mb: number | null;
  /** The worst cell's. */
  lag_p99_ms: number | null;
  live_programs: number;
  programs_seen: number;
  requests: number;
  cells: { name: string; rss_mb: number | null; live_programs: number }[];
}

/**
 * RSS and heap (MB) above, CPU (%) and event-loop delay p99 (ms) below, over wall minutes. The
 * delay is shown beyond `samplingMs`, the monitor's own sampling interval, which an idle router
 * reads too.
 */
export function soakChart(ss: readonly Sample[], samplingMs: number): string {
  const every = Math.max(1, Math.ceil(ss.length / 10));
  const xs = ss.map((s, i) => (i % every === 0 ? (s.t_s / 60).toFixed(1) : ""));
  const cpu = ss.map((s, i) =>
    i === 0 || s.cpu_s === null || ss[i - 1].cpu_s === null
      ? 0
      : (100 * ((s.cpu_s ?? 0) - (ss[i - 1].cpu_s ?? 0))) / Math.max(1e-9, s.t_s - ss[i - 1].t_s),
  );
  const top = lineChart({
    title: "router memory (MB)",
    xLabel: "wall minutes",
    xs,
    series: [
      { label: "RSS", colour: "#2563eb", ys: ss.map((s) => s.rss_mb ?? 0) },
      { label: "heap used", colour: "#16a34a", ys: ss.map((s) => s.heap_mb ?? 0), dashed: true },
    ],
    yStep: 50,
  });
  const bottom = lineChart({
    title: `router CPU (%) and event-loop delay p99 beyond the ${samplingMs} ms sampling (ms)`,
    xLabel: "wall minutes",
    xs,
    series: [
      { label: "CPU %", colour: "#d97706", ys: cpu },
      {
        label: "delay p99 ms",
        colour: "#dc2626",
        ys: ss.map((s) => Math.max(0, (s.lag_p99_ms ?? samplingMs) - samplingMs)),
      },
    ],
    yStep: 20,
  });
  return stackCharts("router memory, CPU and event-loop delay over the soak", [top, bottom]);
}
