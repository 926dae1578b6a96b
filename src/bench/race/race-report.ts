/**
 * The race's report (`npm run bench:race`, race.ts): per tier, a row per contestant with its
 * steps/min and step p99 in every repeat and their means, and each contestant's ratios to the
 * original and to the engine alone, where they raced, per repeat (the runs of the same repeat),
 * lowest to highest.
 */
import { markdownTable } from "../markdown-table.ts";
import { mean } from "../percentile.ts";
import { fix } from "../sims/scorecard.ts";
import { SERIES_COLOURS, xyChart } from "../svg-chart.ts";

/** The original's name in the tables; maitred's contestants are `maitred <preset>`. */
export const ORIGINAL = "original";
/** maitred's plain proxy (`--router default`): the engine's own scheduling, nothing held. */
export const ENGINE_ALONE = "engine alone";

/** One race: a contestant's run at a tier, in a repeat. */
export interface RaceResult {
  repeat: number;
  sizeGiB: number;
  contestant: string;
  stepsPerMin: number;
  stepP95S: number | null;
  stepP99S: number | null;
  cacheHitRate: number | null;
  wallS: number;
}

const list = (vs: (number | null)[], digits: number) => vs.map((v) => fix(v, digits)).join(" / ");
const meanOf = (vs: (number | null)[]) => {
  const known = vs.filter((v): v is number => v !== null);
  return known.length === 0 ? null : mean(known);
};

/** Each repeat's ratio of `name`'s figure to `base`'s in the same repeat and tier. */
export function pairedRatios(
  results: readonly RaceResult[],
  sizeGiB: number,
  name: string,
  figure: (r: RaceResult) => number | null,
  base: string = ORIGINAL,
): number[] {
  const out: number[] = [];
  for (const r of results) {
    if (r.sizeGiB !== sizeGiB || r.contestant !== name) continue;
    const o = results.find(
      (x) => x.sizeGiB === sizeGiB && x.contestant === base && x.repeat === r.repeat,
    );
    const a = figure(r);
    const b = o === undefined ? null : figure(o);
    if (a !== null && b !== null && b > 0) out.push(a / b);
  }
  return out;
}

const spread = (vs: number[]) =>
  vs.length === 0
    ? "–"
    : `${Math.min(...vs).toFixed(2)}–${Math.max(...vs).toFixed(2)} (${vs.length} race${vs.length === 1 ? "" : "s"})`;

export function raceReport(results: readonly RaceResult[]): string {
  const sizes = [...new Set(results.map((r) => r.sizeGiB))];
  const names = [...new Set(results.map((r) => r.contestant))];
  // Each contestant's ratios to each baseline raced beside it, per repeat.
  const bases = [ORIGINAL, ENGINE_ALONE].filter((b) => names.includes(b));
  const against = bases
    .map((b) => (b === ORIGINAL ? "the original ThunderAgent" : "the engine alone"))
    .join(" and ");
  const out: string[] = [
    `## maitred${against === "" ? "'s presets" : ` against ${against}`}, live: each router before two simulated backends of its own, DeepSeek trace`,
  ];
  for (const sizeGiB of sizes) {
    const rows = names.map((name) => {
      const runs = results.filter((r) => r.sizeGiB === sizeGiB && r.contestant === name);
      const steps = runs.map((r) => r.stepsPerMin);
      const p99 = runs.map((r) => r.stepP99S);
      const row = [
        name,
        list(steps, 0),
        fix(meanOf(steps), 1),
        list(p99, 1),
        fix(meanOf(p99), 1),
        list(
          runs.map((r) => (r.cacheHitRate === null ? null : r.cacheHitRate * 100)),
          1,
        ),
      ];
      for (const base of bases) {
        for (const figure of [(r: RaceResult) => r.stepsPerMin, (r: RaceResult) => r.stepP99S]) {
          row.push(name === base ? "" : spread(pairedRatios(results, sizeGiB, name, figure, base)));
        }
      }
      return row;
    });
    out.push(
      [
        `### ${sizeGiB === 0 ? "No host tier" : `${sizeGiB} GiB host tier per backend`}`,
        "",
        markdownTable(
          [
            "router",
            "steps/min, each race",
            "mean",
            "step p99 (s), each race",
            "mean",
            "cache hit %",
            ...bases.flatMap((b) => {
              const whose = b === ORIGINAL ? "the original's" : "the engine alone's";
              return [`steps/min ÷ ${whose}`, `step p99 ÷ ${whose}`];
            }),
          ],
          rows,
          ["router"],
        ),
      ].join("\n"),
    );
  }
  return out.join("\n\n");
}

/** Labels of points closer than this share of both axes are drawn as one: they would overlap. */
const SAME_SPOT = 0.03;

/**
 * The live frontier: per tier a line through each router's point, its mean steps/min against
 * its mean step p99 over the races that have both, shortest p99 first. Routers on one spot (with
 * a tier, the engine alone and `bounded`) are one point named for both.
 */
export function raceChart(results: readonly RaceResult[]): string {
  const sizes = [...new Set(results.map((r) => r.sizeGiB))];
  const names = [...new Set(results.map((r) => r.contestant))];
  const measured = results.filter((r) => r.stepP99S !== null);
  const xMax = Math.max(1e-9, ...measured.map((r) => r.stepP99S as number));
  const yMax = Math.max(1e-9, ...measured.map((r) => r.stepsPerMin));
  const series = sizes.map((sizeGiB, i) => {
    const points: { x: number; y: number; label: string }[] = [];
    for (const name of names) {
      const runs = measured.filter((r) => r.sizeGiB === sizeGiB && r.contestant === name);
      if (runs.length === 0) continue;
      const x = mean(runs.map((r) => r.stepP99S as number));
      const y = mean(runs.map((r) => r.stepsPerMin));
      const label = name.replace(/^maitred /, "").replace(/ alone$/, "");
      const near = points.find(
        (p) => Math.abs(p.x - x) < SAME_SPOT * xMax && Math.abs(p.y - y) < SAME_SPOT * yMax,
      );
      if (near === undefined) points.push({ x, y, label });
      else near.label = `${near.label}, ${label}`;
    }
    return {
      label: sizeGiB === 0 ? "no tier" : `${sizeGiB} GiB`,
      colour: SERIES_COLOURS[i % SERIES_COLOURS.length],
      points: points.sort((a, b) => a.x - b.x),
    };
  });
  return xyChart({
    title: "live: steps/min against step p99, each router's mean (host tier per backend)",
    xLabel: "step p99 (s)",
    series: series.filter((s) => s.points.length > 0),
  });
}

const isRace = (r: unknown): r is RaceResult => {
  if (typeof r !== "object" || r === null) return false;
  const o = r as Record<string, unknown>;
  const num = (v: unknown) => typeof v === "number" && Number.isFinite(v);
  const numOrNull = (v: unknown) => v === null || num(v);
  return (
    num(o.repeat) &&
    num(o.sizeGiB) &&
    typeof o.contestant === "string" &&
    num(o.stepsPerMin) &&
    numOrNull(o.stepP95S) &&
    numOrNull(o.stepP99S) &&
    numOrNull(o.cacheHitRate) &&
    num(o.wallS)
  );
};

/**
 * The races `--json` files hold, a comma list of runs read as one: each file's repeats are
 * numbered after the previous files', since every run numbers its own from 1. Throws with what
 * is wrong in which file.
 */
export function readRaces(files: string, read: (file: string) => string): RaceResult[] {
  const races: RaceResult[] = [];
  for (const file of files.split(",")) {
    const after = Math.max(0, ...races.map((r) => r.repeat));
    let held: unknown;
    try {
      held = JSON.parse(read(file));
    } catch (err) {
      throw new Error(`${file}: not JSON (${(err as Error).message})`);
    }
    if (!Array.isArray(held)) throw new Error(`${file}: not a list of races`);
    held.forEach((r, i) => {
      if (!isRace(r)) throw new Error(`${file}: entry ${i} is not a race of bench:race --json`);
      races.push({ ...r, repeat: after + r.repeat });
    });
  }
  if (races.length === 0) throw new Error(`${files}: no races`);
  return races;
}
