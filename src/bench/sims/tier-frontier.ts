/**
 * The throughput/tail frontier of the tier grid (`npm run bench:tier-grid`): per workload, host
 * tier and concurrency, each point a user can pick (the engine alone, i.e. the default router;
 * tr at each `--tail` preset) with its steps/min and step p99, beside the oracle's; the points
 * no other point beats on both are the frontier. A table per workload and a chart of steps/min
 * against step p99, a line per tier through tr's presets.
 */
import { DEFAULT_TAIL, type TailPreset } from "../../core/scheduler-config.ts";
import { markdownTable } from "../markdown-table.ts";
import { mean } from "../percentile.ts";
import type { TierResult } from "../sim-runs.ts";
import { SERIES_COLOURS, xyChart } from "../svg-chart.ts";
import { fix, ratioOf as ratio, seedsText } from "./scorecard.ts";

type Result = TierResult;

export const isGrid = (r: Result) => r.spec.programs === undefined;
export const isTr = (r: Result) => r.spec.router === "tr";
/** A tr run's `--tail` preset (the shipped one where none was named). */
export const presetOf = (r: Result): TailPreset => r.spec.tail ?? DEFAULT_TAIL;

/** The grid's axes the frontier reads. */
export interface FrontierLists {
  sizes: number[];
  concurrency: number[];
  seeds: number[];
  /** tr's presets: the frontier's points. */
  presets: TailPreset[];
}

export interface FrontierPoint {
  /** `engine alone`, a preset's name, or `oracle`. */
  name: string;
  /** Means over the seeds measured; null when none was. */
  stepsPerMin: number | null;
  stepP99S: number | null;
  /** The longest wait of one step over the seeds. */
  longestWaitS: number | null;
  oracle: boolean;
}

const ENGINE_ALONE = "engine alone";

function pointOf(name: string, runs: Result[], oracle = false): FrontierPoint {
  const of = (f: (r: Result) => number | null) => {
    const vs = runs.map(f).filter((v): v is number => v !== null);
    return vs.length === 0 ? null : vs;
  };
  const steps = of((r) => r.stepsPerMin);
  const p99 = of((r) => r.stepP99S);
  const wait = of((r) => r.longestWaitS);
  return {
    name,
    stepsPerMin: steps === null ? null : mean(steps),
    stepP99S: p99 === null ? null : mean(p99),
    longestWaitS: wait === null ? null : Math.max(...wait),
    oracle,
  };
}

/** The points of one cell: the engine alone, tr at each preset, the oracle where it ran. */
export function frontierPoints(
  results: Result[],
  l: FrontierLists,
  workload: string,
  sizeGiB: number,
  concurrency: number,
): FrontierPoint[] {
  const at = results.filter(
    (r) =>
      isGrid(r) &&
      r.spec.workload === workload &&
      r.spec.concurrency === concurrency &&
      l.seeds.includes(r.spec.seed),
  );
  const sized = at.filter((r) => r.spec.sizeGiB === sizeGiB);
  const points = [
    pointOf(
      ENGINE_ALONE,
      sized.filter((r) => r.spec.router === "default"),
    ),
  ];
  for (const preset of l.presets) {
    points.push(
      pointOf(
        `tr ${preset}`,
        sized.filter((r) => isTr(r) && presetOf(r) === preset),
      ),
    );
  }
  const oracle = at.filter((r) => r.spec.router === "oracle");
  if (oracle.length > 0) points.push(pointOf("oracle (unbounded KV)", oracle, true));
  return points;
}

/**
 * The names of the points no other point beats: none has as many steps/min or more at a step
 * p99 as short or shorter, better in one. The oracle is a bound, not a choice: it is left out.
 */
export function frontierOf(points: readonly FrontierPoint[]): Set<string> {
  const real = points.filter((p) => !p.oracle && p.stepsPerMin !== null && p.stepP99S !== null);
  const on = new Set<string>();
  for (const p of real) {
    const beaten = real.some(
      (q) =>
        q !== p &&
        (q.stepsPerMin as number) >= (p.stepsPerMin as number) &&
        (q.stepP99S as number) <= (p.stepP99S as number) &&
        ((q.stepsPerMin as number) > (p.stepsPerMin as number) ||
          (q.stepP99S as number) < (p.stepP99S as number)),
    );
    if (!beaten) on.add(p.name);
  }
  return on;
}

/** The frontier table of one workload: a row per tier, concurrency and point. */
export function frontierTable(results: Result[], l: FrontierLists, workload: string): string {
  const rows: string[][] = [];
  for (const sizeGiB of l.sizes) {
    for (const concurrency of l.concurrency) {
      const points = frontierPoints(results, l, workload, sizeGiB, concurrency);
      const engine = points[0];
      const on = frontierOf(points);
      for (const p of points) {
        rows.push([
          String(sizeGiB),
          String(concurrency),
          p.name,
          fix(p.stepsPerMin, 1),
          fix(ratio(p.stepsPerMin, engine.stepsPerMin), 2),
          fix(p.stepP99S, 0),
          fix(ratio(p.stepP99S, engine.stepP99S), 2),
          fix(p.longestWaitS, 0),
          p.oracle ? "bound" : on.has(p.name) ? "yes" : "",
        ]);
      }
    }
  }
  return [
    `### ${workload}: the throughput/tail frontier (means over ${seedsText(l.seeds)})`,
    "",
    markdownTable(
      [
        "host tier per engine (GiB)",
        "programs",
        "point",
        "steps/min",
        "÷ engine alone",
        "step p99 (s)",
        "p99 ÷ engine alone",
        "longest wait (s)",
        "on the frontier",
      ],
      rows,
      ["point"],
    ),
    "",
    "A point is on the frontier when no other has as many steps/min at a step p99 as short, one of them strictly; the oracle (no KV limit) bounds what any router could reach.",
  ].join("\n");
}

/** Steps/min against step p99 for one workload at the largest concurrency, a line per tier. */
export function frontierChart(results: Result[], l: FrontierLists, workload: string): string {
  const top = Math.max(...l.concurrency);
  const series = l.sizes.map((sizeGiB, i) => {
    const points = frontierPoints(results, l, workload, sizeGiB, top).filter(
      (p) => !p.oracle && p.stepsPerMin !== null && p.stepP99S !== null,
    );
    return {
      label: `${sizeGiB} GiB`,
      colour: SERIES_COLOURS[i % SERIES_COLOURS.length],
      points: [...points]
        .sort((a, b) => (a.stepP99S as number) - (b.stepP99S as number))
        .map((p) => ({
          x: p.stepP99S as number,
          y: p.stepsPerMin as number,
          label: p.name === ENGINE_ALONE ? "engine" : p.name.replace("tr ", ""),
        })),
    };
  });
  return xyChart({
    title: `${workload}, ${top} programs: steps/min against step p99 (host tier per engine)`,
    xLabel: "step p99 (s)",
    series: series.filter((s) => s.points.length > 0),
  });
}
