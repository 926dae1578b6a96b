import type { EnginePromptTokens } from "./engine-window.ts";
import { formatClassTable } from "./format-class-table.ts";
import type { RunReport } from "./report.ts";
import { cell, ratioText, renderTable } from "./table-cells.ts";

/**
 * Human tables for bench reports: one column per run, and from the second run on each number
 * carries its ratio to the first run (the baseline), e.g. `371.0 (2.65x)`, the way ThunderAgent
 * labels its speed-ups over vLLM.
 */

interface Row {
  label: string;
  value: (r: RunReport) => number | null;
  /** Digits after the decimal point. */
  digits: number;
  /** Ratios are meaningful for throughput/latency rows, not for counts of errors. */
  ratio: boolean;
  /** Shown only when a run had a fixed batch (`--programs N`). */
  batch?: true;
  /** Shown only when a run read its engines' counters (`bench compare`). */
  engine?: true;
}

const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

const ROWS: Row[] = [
  { label: "steps/min", value: (r) => r.steps_per_min, digits: 1, ratio: true },
  { label: "steps completed", value: (r) => r.steps_completed, digits: 0, ratio: true },
  { label: "programs completed", value: (r) => r.programs_completed, digits: 0, ratio: true },
  { label: "programs failed", value: (r) => r.programs_failed, digits: 0, ratio: false },
  ...(["p50", "p95", "max"] as const).map(
    (q): Row => ({
      label: `program completion ${q} (s)`,
      value: (r) => seconds(r.program_completion_ms[q]),
      digits: 1,
      ratio: true,
    }),
  ),
  {
    label: "batch makespan (s)",
    value: (r) => seconds(r.batch?.makespan_ms ?? null),
    digits: 1,
    ratio: true,
    batch: true,
  },
  {
    label: "batch programs ended",
    value: (r) => (r.batch === undefined ? null : r.batch.completed + r.batch.failed),
    digits: 0,
    ratio: false,
    batch: true,
  },
  { label: "step latency p50 (ms)", value: (r) => r.step_latency_ms.p50, digits: 0, ratio: true },
  { label: "step latency p95 (ms)", value: (r) => r.step_latency_ms.p95, digits: 0, ratio: true },
  { label: "step latency p99 (ms)", value: (r) => r.step_latency_ms.p99, digits: 0, ratio: true },
  { label: "TTFT p50 (ms)", value: (r) => r.ttft_ms.p50, digits: 0, ratio: true },
  { label: "TTFT p95 (ms)", value: (r) => r.ttft_ms.p95, digits: 0, ratio: true },
  {
    label: "first response p50 (ms)",
    value: (r) => r.first_response_ms.p50,
    digits: 0,
    ratio: true,
  },
  {
    label: "first response p95 (ms)",
    value: (r) => r.first_response_ms.p95,
    digits: 0,
    ratio: true,
  },
  {
    label: "first response spread (ms)",
    value: (r) => r.first_response_ms.spread,
    digits: 0,
    ratio: true,
  },
  { label: "paused total (s)", value: (r) => r.paused_ms.total / 1000, digits: 1, ratio: false },
  { label: "steps paused", value: (r) => r.paused_ms.steps_paused, digits: 0, ratio: false },
  { label: "prompt tokens", value: (r) => r.prompt_tokens.total, digits: 0, ratio: true },
  { label: "  from cache", value: (r) => r.prompt_tokens.cached, digits: 0, ratio: true },
  { label: "  re-prefilled", value: (r) => r.prompt_tokens.prefilled, digits: 0, ratio: true },
  {
    label: "cache hit rate (%)",
    value: (r) =>
      r.prompt_tokens.cache_hit_rate === null ? null : r.prompt_tokens.cache_hit_rate * 100,
    digits: 1,
    ratio: false,
  },
  ...(
    [
      ["engine: GPU prefix hits", (e) => e.gpu_hits, 0],
      ["engine: host tier loads", (e) => e.host_loaded, 0],
      ["engine: prefilled", (e) => e.prefilled, 0],
      ["engine: host load time (s)", (e) => e.host_load_s, 1],
    ] as const satisfies readonly [string, (e: EnginePromptTokens) => number, number][]
  ).map(
    ([label, of, digits]): Row => ({
      label,
      value: (r) => (r.engine_prompt_tokens ? of(r.engine_prompt_tokens) : null),
      digits,
      ratio: true,
      engine: true,
    }),
  ),
  { label: "errors", value: (r) => r.errors_total, digits: 0, ratio: false },
];

/** What the completion and makespan rows measure, under the table. */
function completionNote(runs: readonly RunReport[]): string {
  const note =
    "program completion: first request -> release (never released: the end of its last step), over the programs completed in the steady window whatever their start; programs still running at the end are left out";
  const batch = runs.find((r) => r.batch !== undefined)?.batch;
  if (batch === undefined) return note;
  return `${note}\nbatch makespan: run start -> the last of the batch's ${batch.programs} programs ends (completed or failed); - when the run stopped first`;
}

/** Side-by-side table; works for one run too. */
export function formatRunsTable(runs: readonly RunReport[]): string {
  if (runs.length === 0) return "(no runs)";
  const base = runs[0];
  const header = ["", ...runs.map((r) => `${r.router} (C=${r.concurrency})`)];
  const batched = runs.some((r) => r.batch !== undefined);
  const engine = runs.some((r) => r.engine_prompt_tokens !== undefined);
  const shown = ROWS.filter(
    (row) => (batched || row.batch === undefined) && (engine || row.engine === undefined),
  );
  const rows = shown.map((row) => [
    row.label,
    ...runs.map((r, i) => {
      const v = row.value(r);
      const text = cell(v, row.digits);
      return i > 0 && row.ratio ? text + ratioText(v, row.value(base)) : text;
    }),
  ]);
  const kinds = [...new Set(runs.flatMap((r) => Object.keys(r.errors)))].sort();
  for (const kind of kinds) {
    rows.push([`  ${kind}`, ...runs.map((r) => String(r.errors[kind] ?? 0))]);
  }
  const w = base.window_ms;
  const unreleased =
    base.unreleased_share === undefined ? "" : `, unreleased ${base.unreleased_share}`;
  const engineNote = engine
    ? "\nengine: the simulated backends' own prompt-token counters over the steady window (vLLM's cached_tokens counts GPU hits and host loads alike)"
    : "";
  const footer = `wall-clock figures; workload ${base.workload}, seed ${base.seed}, time scale ${base.time_scale}${unreleased}, steady window ${w.start}-${w.end} ms`;
  const classes = formatClassTable(runs);
  return `${renderTable(header, rows)}\n${footer}\n${completionNote(runs)}${engineNote}${classes === null ? "" : `\n\n${classes}`}`;
}
