/**
 * The race's report (`npm run bench:race`, race.ts): per tier, a row per contestant with its
 * steps/min and step p99 in every repeat and their means, and for each maitred contestant its
 * ratio to the original per repeat (the two runs of the same repeat), lowest to highest.
 */
import { markdownTable } from "../markdown-table.ts";
import { mean } from "../percentile.ts";
import { fix } from "../sims/scorecard.ts";

/** The original's name in the tables; maitred's contestants are `maitred <preset>`. */
export const ORIGINAL = "original";

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

/** Each repeat's ratio of `name`'s figure to the original's in the same repeat and tier. */
export function pairedRatios(
  results: readonly RaceResult[],
  sizeGiB: number,
  name: string,
  figure: (r: RaceResult) => number | null,
): number[] {
  const out: number[] = [];
  for (const r of results) {
    if (r.sizeGiB !== sizeGiB || r.contestant !== name) continue;
    const o = results.find(
      (x) => x.sizeGiB === sizeGiB && x.contestant === ORIGINAL && x.repeat === r.repeat,
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
  const hasOriginal = names.includes(ORIGINAL);
  const out: string[] = [
    "## maitred against the original ThunderAgent, live: each router before two simulated backends of its own, DeepSeek trace",
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
      if (hasOriginal) {
        row.push(
          name === ORIGINAL
            ? ""
            : spread(pairedRatios(results, sizeGiB, name, (r) => r.stepsPerMin)),
          name === ORIGINAL ? "" : spread(pairedRatios(results, sizeGiB, name, (r) => r.stepP99S)),
        );
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
            ...(hasOriginal ? ["steps/min ÷ the original's", "step p99 ÷ the original's"] : []),
          ],
          rows,
          ["router"],
        ),
      ].join("\n"),
    );
  }
  return out.join("\n\n");
}
