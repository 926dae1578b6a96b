import { formatRunsTable } from "../bench/format-table.ts";
import type { RunReport } from "../bench/report.ts";
import type { SchedulerConfig, SchedulerCounters } from "../core/api.ts";
import { PRIORITY_CLASSES } from "../core/priority/priority-classes.ts";
import { DEFAULT_PREEMPTION_THRESHOLD } from "../engine/queue-order.ts";
import type { PriorityRules, PriorityScheduling } from "../engine/types.ts";
import type { ShadowSummary } from "../shadow/shadow.ts";
import type { BackendTruth, TruthSeries } from "./engine-truth.ts";
import type { ClassTruth, PriorityTruth } from "./priority-truth.ts";

/**
 * `maitred simulate`'s report: the bench report (src/bench/report.ts, same fields, same
 * table, same SVG) plus engine truth per backend and the core's decision counters, both over
 * the steady window, and the per-tick series of the whole run.
 */

export interface SimulateRunReport extends RunReport {
  simulated: {
    profile: string;
    num_backends: number;
    num_gpu_blocks: number;
    /** Host KV tier per engine, GiB (0: none). */
    kv_offloading_size: number;
    /** The engines' priority scheduling; absent: first come, first served. */
    priority_scheduling?: PriorityReport;
    block_size: number;
    scheduler_interval_ms: number;
    scheduler_config: SchedulerConfig;
  };
  backends: BackendTruth[];
  scheduler: SchedulerCounters;
  /** Tokens booked for programs between steps, mean over the window's ticks (engine-truth.ts). */
  acting_held_tokens_mean: number | null;
  /** With `--shadow`, on a `default` run: what a tr core would have done (whole run). */
  shadow?: SimulateShadow;
  /**
   * The longest wait so far of a request still parked in the core when the run ended (any
   * class; null when none was). `paused_ms` counts only steps that got their answer, so a
   * step held across the end of the window would not show there.
   */
  still_parked_max_ms: number | null;
  /** The core's class counters and queue waits over the window (priorities in force only). */
  priority?: PriorityTruth;
  series: TruthSeries;
}

/** The engines' priority scheduling as the report records it, by its flags' names. */
export interface PriorityReport {
  scheduling_policy: "priority";
  /** Whose rules (`--personality`). */
  personality: PriorityRules;
  /** SGLang's knobs; vLLM has neither. */
  schedule_low_priority_values_first?: boolean;
  priority_scheduling_preemption_threshold?: number;
}

export function priorityReport(p: PriorityScheduling): PriorityReport {
  if (p.rules === "vllm") return { scheduling_policy: "priority", personality: "vllm" };
  return {
    scheduling_policy: "priority",
    personality: "sglang",
    schedule_low_priority_values_first: p.lowValuesFirst === true,
    priority_scheduling_preemption_threshold: p.preemptionThreshold ?? DEFAULT_PREEMPTION_THRESHOLD,
  };
}

/** The setup line's words for it: empty for first come, first served. */
function prioritySetup(p: PriorityReport | undefined): string {
  if (p === undefined) return "";
  if (p.personality === "vllm") return ", engines scheduling by priority (vLLM's rules)";
  const order = p.schedule_low_priority_values_first === true ? "low" : "high";
  return `, engines scheduling by priority (SGLang's rules: ${order} values first, preempting for a gap over ${p.priority_scheduling_preemption_threshold})`;
}

/** The `--json FILE` document: `{"runs": [...]}`, one run per (router, concurrency). */
export function simulateJson(runs: readonly SimulateRunReport[]): string {
  return `${JSON.stringify({ runs }, null, 2)}\n`;
}

interface Row {
  label: string;
  value(r: SimulateRunReport): string;
}

const fixed = (v: number | null, digits: number) => (v === null ? "-" : v.toFixed(digits));
const mega = (v: number) => (v / 1e6).toFixed(2);
const sum = (r: SimulateRunReport, f: (b: BackendTruth) => number) =>
  r.backends.reduce((a, b) => a + f(b), 0);
const perBackend = (r: SimulateRunReport, f: (b: BackendTruth) => string) =>
  r.backends.map(f).join(" / ");

const ROWS: Row[] = [
  { label: "engine preemptions", value: (r) => String(sum(r, (b) => b.preemptions)) },
  { label: "engine recomputed tokens", value: (r) => String(sum(r, (b) => b.recomputed_tokens)) },
  {
    label: "engine prefix hit rate (%)",
    value: (r) => {
      const q = sum(r, (b) => b.prefix_cache_queries);
      return q === 0 ? "-" : ((100 * sum(r, (b) => b.prefix_cache_hits)) / q).toFixed(1);
    },
  },
  {
    label: "prompt tokens: GPU hits (M)",
    value: (r) => mega(sum(r, (b) => b.prefix_cache_hits)),
  },
  {
    label: "prompt tokens: host loads (M)",
    value: (r) => mega(sum(r, (b) => b.host_loaded_tokens)),
  },
  {
    label: "prompt tokens: prefilled (M)",
    value: (r) => mega(sum(r, (b) => b.prefilled_tokens)),
  },
  {
    label: "host link loading (s)",
    value: (r) =>
      fixed(
        sum(r, (b) => b.host_load_s),
        1,
      ),
  },
  {
    label: "KV usage mean (per backend)",
    value: (r) => perBackend(r, (b) => fixed(b.kv_usage.mean, 2)),
  },
  {
    label: "KV usage max (per backend)",
    value: (r) => perBackend(r, (b) => fixed(b.kv_usage.max, 2)),
  },
  {
    label: "engine busy (per backend)",
    value: (r) => perBackend(r, (b) => fixed(b.busy_fraction, 2)),
  },
  { label: "core pauses", value: (r) => String(r.scheduler.pauses) },
  { label: "core marks", value: (r) => String(r.scheduler.marks) },
  { label: "core resumes", value: (r) => String(r.scheduler.resumes) },
  { label: "core forced resumes", value: (r) => String(r.scheduler.forcedResumes) },
  { label: "core migrations", value: (r) => String(r.scheduler.migrations) },
  { label: "core releases", value: (r) => String(r.scheduler.releases) },
  {
    label: "room held by ACTING (tokens)",
    value: (r) => (r.acting_held_tokens_mean === null ? "-" : String(r.acting_held_tokens_mean)),
  },
  { label: "likely done: marked", value: (r) => String(r.scheduler.likelyDoneMarks) },
  { label: "likely done: continued", value: (r) => String(r.scheduler.likelyDoneContinued) },
  { label: "likely done: released", value: (r) => String(r.scheduler.likelyDoneReleases) },
  {
    label: "likely done: came back",
    value: (r) => String(r.scheduler.likelyDoneReturns),
  },
];

function render(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

const CLASS_ROWS: { label: string; value(c: ClassTruth): string }[] = [
  { label: "admitted", value: (c) => String(c.admissions.admitted) },
  { label: "queued", value: (c) => String(c.admissions.queued) },
  { label: "429 queue full", value: (c) => String(c.admissions.queue_full) },
  { label: "408 queue timeout", value: (c) => String(c.admissions.queue_timeout) },
  { label: "503 preempted", value: (c) => String(c.admissions.preempted) },
  { label: "taken as preemption victim", value: (c) => String(c.preemptions) },
  { label: "starvation promotions", value: (c) => String(c.promotions) },
  {
    label: "queue wait max (s)",
    value: (c) => fixed(c.queue_wait_ms.max === null ? null : c.queue_wait_ms.max / 1000, 1),
  },
  {
    label: "still parked at end, max (s)",
    value: (c) => fixed(c.still_waiting_max_ms === null ? null : c.still_waiting_max_ms / 1000, 1),
  },
];

/** The core's class counters (runs with priorities in force), or null. */
function formatPriorityTruth(runs: readonly SimulateRunReport[]): string | null {
  if (!runs.some((r) => r.priority !== undefined)) return null;
  const header = [
    "core by class (steady window)",
    ...runs.map((r) => `${r.router} (C=${r.concurrency})`),
  ];
  const rows: string[][] = [];
  for (const cls of PRIORITY_CLASSES) {
    for (const row of CLASS_ROWS) {
      rows.push([
        `${cls} ${row.label}`,
        ...runs.map((r) => (r.priority === undefined ? "-" : row.value(r.priority.classes[cls]))),
      ]);
    }
  }
  return render(header, rows);
}

/** tr's bounds on waiting as its core ran with them (the default router never pauses). */
function waitBounds(c: SchedulerConfig | undefined): string {
  if (c === undefined) return "";
  const ageing = c.ageingMs === undefined ? "" : `, ageing ${c.ageingMs / 1000} s`;
  return `${ageing}, max pause ${c.maxPauseMs / 1000} s`;
}

/** A shadow's summary without its latest decisions. */
export type SimulateShadow = Omit<ShadowSummary, "recent">;

const secs = (ms: number | null) => (ms === null ? "-" : `${(ms / 1000).toFixed(1)} s`);

/** What each `default` run's tr shadow would have done (`--shadow`); null without one. */
function formatShadows(runs: readonly SimulateRunReport[]): string | null {
  const lines: string[] = [];
  for (const r of runs) {
    const s = r.shadow;
    if (s === undefined) continue;
    const first = s.firstChange;
    lines.push(
      `tr shadow beside ${r.router} (C=${r.concurrency}), the whole run: ${s.held.held} requests held (p50 ${secs(s.held.durations.p50Ms)}, max ${secs(s.held.durations.maxMs)}), ${s.paused.pauses} pauses, ${s.decisions.mark} marks, ${s.decisions.lend} lends, ${s.seats.elsewhere} of ${s.seats.total} seats elsewhere; engines overflowing on ${s.engines.overflowTicks} of ${s.engines.ticks} ticks, ${s.engines.preemptions} preemptions; first traffic change ${first === null ? "none" : `at ${secs(first.at - s.since)} (${first.kind})`}`,
    );
  }
  return lines.length === 0 ? null : lines.join("\n");
}

/** The bench table (with ratios to the first run), then engine truth and core counters. */
export function formatSimulateTable(runs: readonly SimulateRunReport[]): string {
  if (runs.length === 0) return "(no runs)";
  const header = [
    "engine truth (steady window)",
    ...runs.map((r) => `${r.router} (C=${r.concurrency})`),
  ];
  const rows = ROWS.map((row) => [row.label, ...runs.map((r) => row.value(r))]);
  // The oracle's engines are enlarged; the cache the others ran on is the one to show.
  const s = (runs.find((r) => r.router !== "oracle") ?? runs[0]).simulated;
  const setup = `simulated: ${s.num_backends} x ${s.profile}, ${s.num_gpu_blocks} KV blocks of ${s.block_size} tokens per engine (oracle: unbounded)${s.kv_offloading_size > 0 ? `, a host KV tier of ${s.kv_offloading_size} GiB per engine` : ""}${prioritySetup(s.priority_scheduling)}, scheduler interval ${s.scheduler_interval_ms / 1000} s${waitBounds(runs.find((r) => r.router === "tr")?.simulated.scheduler_config)}`;
  // The bench table labels its figures as wall-clock ones; here every time is virtual.
  const bench = formatRunsTable(runs).replace(/^wall-clock figures;/m, "virtual-time figures;");
  const classes = formatPriorityTruth(runs);
  const shadows = formatShadows(runs);
  return `${bench}\n\n${render(header, rows)}\n${setup}${classes === null ? "" : `\n\n${classes}`}${shadows === null ? "" : `\n\n${shadows}`}`;
}
