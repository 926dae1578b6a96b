/**
 * The tier grid's report (`npm run bench:tier-grid`, tier-grid-scorecard.ts): from the runs
 * of tr, default and the oracle over host KV tiers × workloads × concurrencies × seeds, and of
 * a fixed batch, a markdown table per workload, the batch's table, a summary per tier, the
 * grid's lowest tr ÷ default, and the chart of tr ÷ default against the tier size.
 */
import { DEFAULT_TAIL, type TailPreset } from "../../core/scheduler-config.ts";
import { markdownTable } from "../markdown-table.ts";
import { mean } from "../percentile.ts";
import type { TierResult } from "../sim-runs.ts";
import { lineChart, SERIES_COLOURS, stackCharts } from "../svg-chart.ts";
import { fix, mega, ratioOf as ratio, seedsText } from "./scorecard.ts";
import { frontierChart, frontierTable, isGrid, isTr, presetOf } from "./tier-frontier.ts";

export type Result = TierResult;

export { isGrid, isTr, presetOf };
export const isBatch = (r: Result) => r.spec.programs !== undefined;

/** A cell's tr and default (and its oracle, where one ran), any of them missing from a `--from-json`. */
export interface Cell {
  workload: string;
  sizeGiB: number;
  concurrency: number;
  seed: number;
  tr?: Result;
  def?: Result;
  oracle?: Result;
}

const cellName = (c: Cell) =>
  `${c.workload}, ${c.sizeGiB} GiB, ${c.concurrency} programs, seed ${c.seed}`;

/** The grid's axes, as the flags (or the saved runs) give them. */
export interface Lists {
  sizes: number[];
  workloads: string[];
  concurrency: number[];
  seeds: number[];
  /** tr's presets: the frontier's points. */
  presets: TailPreset[];
  batchSizes: number[];
  batchSeeds: number[];
}

export function cellsOf(results: Result[], l: Lists, workload: string): Cell[] {
  const grid = results.filter(isGrid);
  const top = Math.max(...l.concurrency);
  // The tables' tr is the shipped preset; the others are the frontier's (frontierTable).
  const find = (router: string, seed: number, sizeGiB: number, concurrency: number) =>
    grid.find(
      (r) =>
        r.spec.workload === workload &&
        r.spec.router === router &&
        r.spec.seed === seed &&
        r.spec.concurrency === concurrency &&
        (router === "oracle" || r.spec.sizeGiB === sizeGiB) &&
        (!isTr(r) || presetOf(r) === DEFAULT_TAIL),
    );
  const cells: Cell[] = [];
  for (const sizeGiB of l.sizes) {
    for (const concurrency of l.concurrency) {
      for (const seed of l.seeds) {
        cells.push({
          workload,
          sizeGiB,
          concurrency,
          seed,
          tr: find("tr", seed, sizeGiB, concurrency),
          def: find("default", seed, sizeGiB, concurrency),
          oracle: concurrency === top ? find("oracle", seed, 0, top) : undefined,
        });
      }
    }
  }
  return cells;
}

const trOverDefault = (c: Cell) => ratio(c.tr?.stepsPerMin, c.def?.stepsPerMin);
const p99OverDefault = (c: Cell) => ratio(c.tr?.stepP99S, c.def?.stepP99S);

function workloadTable(cells: Cell[], workload: string, window: string): string {
  const rows = cells.map((c) => [
    String(c.sizeGiB),
    String(c.concurrency),
    String(c.seed),
    fix(c.tr?.stepsPerMin, 1),
    fix(c.def?.stepsPerMin, 1),
    fix(trOverDefault(c), 2),
    fix(ratio(c.tr?.stepsPerMin, c.oracle?.stepsPerMin), 2),
    fix(c.tr?.stepP99S, 0),
    fix(c.def?.stepP99S, 0),
    fix(c.tr?.longestWaitS, 0),
    mega(c.tr?.prefilled),
    mega(c.def?.prefilled),
  ]);
  const oracles = cells
    .filter((c) => c.oracle !== undefined && c.sizeGiB === cells[0].sizeGiB)
    .map(
      (c) =>
        `seed ${c.seed}: ${fix(c.oracle?.stepsPerMin, 1)} steps/min, step p99 ${fix(c.oracle?.stepP99S, 0)} s, ${mega(c.oracle?.prefilled)} M re-prefilled`,
    );
  const example = cells.find((c) => c.tr !== undefined)?.tr?.command;
  return [
    `### ${workload}: ${window}`,
    "",
    markdownTable(
      [
        "host tier per engine (GiB)",
        "programs",
        "seed",
        "tr steps/min",
        "default steps/min",
        "tr ÷ default",
        "tr ÷ oracle",
        "tr step p99 (s)",
        "default step p99 (s)",
        "tr longest wait (s)",
        "re-prefilled M, tr",
        "re-prefilled M, default",
      ],
      rows,
      [],
    ),
    "",
    ...(oracles.length === 0
      ? []
      : [
          `Oracle (unbounded GPU KV, no tier, ${cells.find((c) => c.oracle)?.concurrency} programs): ${oracles.join("; ")}.`,
        ]),
    ...(example === undefined
      ? []
      : [
          `Command of a cell: \`${example}\`; the same with \`--router default\`, \`--router oracle\` (\`--kv-offloading-size 0\`) and each size, concurrency and seed.`,
        ]),
  ].join("\n");
}

function batchTable(results: Result[], l: Lists): string | null {
  const batch = results.filter(isBatch);
  if (batch.length === 0) return null;
  const { workload, programs, concurrency } = batch[0].spec;
  const rows: string[][] = [];
  for (const sizeGiB of l.batchSizes) {
    for (const seed of l.batchSeeds) {
      const find = (router: string) =>
        batch.find(
          (r) =>
            r.spec.router === router &&
            r.spec.seed === seed &&
            (router === "oracle" || r.spec.sizeGiB === sizeGiB),
        );
      const def = find("default");
      for (const router of ["default", "tr", "oracle"]) {
        const r = find(router);
        rows.push([
          String(sizeGiB),
          String(seed),
          router === "oracle" ? "oracle (no tier)" : router,
          fix(r?.batch?.makespanS, 0),
          fix(r?.batch?.completionP99S, 0),
          fix(r?.batch?.firstResponseSpreadS, 0),
          fix(ratio(r?.batch?.makespanS, def?.batch?.makespanS), 2),
          fix(ratio(r?.batch?.firstResponseSpreadS, def?.batch?.firstResponseSpreadS), 2),
        ]);
      }
    }
  }
  return [
    `### Fixed batch: ${programs} ${workload} programs, ${concurrency} at a time, run until the last ends`,
    "",
    markdownTable(
      [
        "host tier per engine (GiB)",
        "seed",
        "router",
        "makespan (s)",
        "program completion p99 (s)",
        "first-response spread (s)",
        "makespan ÷ default",
        "spread ÷ default",
      ],
      rows,
      ["router"],
    ),
    "",
    `Command: \`${batch.find((r) => r.spec.router === "tr")?.command ?? batch[0].command}\`, and the same per router and size.`,
  ].join("\n");
}

/** The lowest (or highest) of `cells` by `f`, with its cell; undefined when none has the figure. */
function extreme(cells: Cell[], f: (c: Cell) => number | null, which: "lowest" | "highest") {
  const sign = which === "lowest" ? 1 : -1;
  let best: { v: number; cell: Cell } | undefined;
  for (const cell of cells) {
    const v = f(cell);
    if (v !== null && (best === undefined || sign * v < sign * best.v)) best = { v, cell };
  }
  return best;
}

const withCell = (x: { v: number; cell: Cell } | undefined) =>
  x === undefined ? "–" : `${x.v.toFixed(2)} (${cellName(x.cell)})`;

function summary(cells: Cell[], l: Lists): string {
  const rows = l.sizes.map((size) => {
    const at = cells.filter((c) => c.sizeGiB === size);
    const ratios = at.map(trOverDefault).filter((v): v is number => v !== null);
    return [
      String(size),
      `${ratios.length} of ${at.length}`,
      withCell(extreme(at, trOverDefault, "lowest")),
      ratios.length === 0 ? "–" : mean(ratios).toFixed(2),
      withCell(extreme(at, p99OverDefault, "highest")),
    ];
  });
  return [
    `### Per tier, over ${l.workloads.join(", ")} × ${l.concurrency.join(", ")} programs × ${seedsText(l.seeds)}`,
    "",
    markdownTable(
      [
        "host tier per engine (GiB)",
        "cells measured",
        "lowest tr ÷ default",
        "mean tr ÷ default",
        "highest tr step p99 ÷ default step p99",
      ],
      rows,
      ["lowest tr ÷ default", "highest tr step p99 ÷ default step p99"],
    ),
  ].join("\n");
}

/** tr ÷ default against the tier size, a line per workload and concurrency, mean over seeds. */
function chart(cells: Cell[], l: Lists): string {
  const series = l.workloads.flatMap((workload, w) =>
    l.concurrency.map((c, k) => ({
      label: `${workload}, ${c}`,
      colour: SERIES_COLOURS[w % SERIES_COLOURS.length],
      dashed: k < l.concurrency.length - 1,
      ys: l.sizes.map((size) => {
        const rs = cells
          .filter((x) => x.workload === workload && x.concurrency === c && x.sizeGiB === size)
          .map(trOverDefault)
          .filter((v): v is number => v !== null);
        return rs.length === 0 ? Number.NaN : mean(rs);
      }),
    })),
  );
  return lineChart({
    title: `tr ÷ default steps/min (mean of ${seedsText(l.seeds)}; dashed: fewer programs)`,
    xLabel: "host KV tier per engine (GiB)",
    xs: l.sizes,
    yStep: 0.5,
    series: series.filter((s) => s.ys.every(Number.isFinite)),
  });
}

/**
 * The whole report: a heading with each workload's window (`windows`, in the order of
 * `l.workloads`), a table per workload, the batch's, the summary per tier, and last the
 * grid's lowest tr ÷ default with its cell.
 */
export function tierGridReport(results: Result[], l: Lists, windows: readonly string[]): string {
  const cells = l.workloads.flatMap((w) => cellsOf(results, l, w));
  const out = [
    `## tr and default over host KV tiers: 2 × llama-3.1-8b-h100, 26,000 KV blocks per engine, host tiers ${l.sizes.join(", ")} GiB per engine, ${l.concurrency.join(", ")} programs, ${seedsText(l.seeds)}; the oracle at ${Math.max(...l.concurrency)} programs\n\nWindows: ${l.workloads.map((w, i) => `${w} ${windows[i]}`).join("; ")}.`,
    ...l.workloads.map((w, i) =>
      workloadTable(
        cells.filter((c) => c.workload === w),
        w,
        windows[i],
      ),
    ),
  ];
  for (const w of l.workloads) out.push(frontierTable(results, l, w));
  const batch = batchTable(results, l);
  if (batch !== null) out.push(batch);
  out.push(summary(cells, l));
  out.push(
    `minimum tr ÷ default over the grid: ${withCell(extreme(cells, trOverDefault, "lowest"))}`,
  );
  return out.join("\n\n");
}

/** tr ÷ default against the tier size, then each workload's frontier (`--svg`). */
export const tierGridChart = (results: Result[], l: Lists): string =>
  stackCharts("tr and default over host KV tiers", [
    chart(
      l.workloads.flatMap((w) => cellsOf(results, l, w)),
      l,
    ),
    ...l.workloads.map((w) => frontierChart(results, l, w)),
  ]);
