import { PRIORITY_CLASSES, type PriorityClass } from "../core/priority/priority-classes.ts";
import type { ClassReport } from "./class-report.ts";
import type { RunReport } from "./report.ts";
import { cell, ratioText, renderTable } from "./table-cells.ts";

/**
 * The per-class part of the bench and simulate tables: for each class that ran, its
 * throughput, step latency, TTFT, longest router hold and errors by kind, one column per run
 * with ratios to the first run (as the main table). Shown only when a run had programs of a
 * class other than `default` (a workload with classes).
 */

interface ClassRow {
  label: string;
  value: (c: ClassReport) => number | null;
  digits: number;
  ratio: boolean;
}

const ROWS: ClassRow[] = [
  { label: "steps/min", value: (c) => c.steps_per_min, digits: 1, ratio: true },
  { label: "step latency p50 (ms)", value: (c) => c.step_latency_ms.p50, digits: 0, ratio: true },
  { label: "step latency p95 (ms)", value: (c) => c.step_latency_ms.p95, digits: 0, ratio: true },
  { label: "step latency p99 (ms)", value: (c) => c.step_latency_ms.p99, digits: 0, ratio: true },
  { label: "TTFT p50 (ms)", value: (c) => c.ttft_ms.p50, digits: 0, ratio: true },
  { label: "TTFT p95 (ms)", value: (c) => c.ttft_ms.p95, digits: 0, ratio: true },
  { label: "TTFT p99 (ms)", value: (c) => c.ttft_ms.p99, digits: 0, ratio: true },
  {
    label: "queue wait max (s)",
    value: (c) => (c.queue_wait_ms.max === null ? null : c.queue_wait_ms.max / 1000),
    digits: 1,
    ratio: false,
  },
  { label: "errors", value: (c) => c.errors_total, digits: 0, ratio: false },
];

function classesOf(runs: readonly RunReport[]): PriorityClass[] {
  return PRIORITY_CLASSES.filter((c) => runs.some((r) => r.classes[c] !== undefined));
}

/** The per-class table, or null when every program of every run is `default`. */
export function formatClassTable(runs: readonly RunReport[]): string | null {
  const classes = classesOf(runs);
  if (classes.length === 0 || (classes.length === 1 && classes[0] === "default")) return null;
  const header = [
    "per class (steady window)",
    ...runs.map((r) => `${r.router} (C=${r.concurrency})`),
  ];
  const rows: string[][] = [];
  for (const cls of classes) {
    for (const row of ROWS) {
      const base = runs[0].classes[cls];
      const baseValue = base === undefined ? null : row.value(base);
      rows.push([
        `${cls} ${row.label}`,
        ...runs.map((r, i) => {
          const c = r.classes[cls];
          const v = c === undefined ? null : row.value(c);
          const text = cell(v, row.digits);
          return i > 0 && row.ratio ? text + ratioText(v, baseValue) : text;
        }),
      ]);
    }
    const kinds = [...new Set(runs.flatMap((r) => Object.keys(r.classes[cls]?.errors ?? {})))];
    for (const kind of kinds.sort()) {
      rows.push([`  ${kind}`, ...runs.map((r) => String(r.classes[cls]?.errors[kind] ?? 0))]);
    }
  }
  return renderTable(header, rows);
}
