/**
 * What the simulation scorecards (bench:tr, bench:tail, bench:tier-grid, bench:host-tier,
 * bench:simulate, bench:priority) share besides their runs (../sim-runs.ts): where their text
 * goes, the pool their runs go to, the figures as their tables print them, and the JSON they
 * write. A scorecard writes through an `Out` (and runs through a `SimIo`) rather than to the
 * process, so a test can run it whole, in this process, on runs it makes up, and read it.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { mean } from "../percentile.ts";
import { benchEntry, runInChildren } from "../sim-runs.ts";
import { figure } from "../table-cells.ts";

/** Where a scorecard writes. */
export interface Out {
  /** The report: stdout, which carries the tables and JSON other tools read. */
  print(text: string): void;
  /** Progress: stderr. */
  note(text: string): void;
}

/** A scorecard whose runs go to a pool: `run` gives every spec's result, in the specs' order. */
export interface SimIo<S, R> extends Out {
  run(specs: readonly S[], jobs: number): Promise<R[]>;
}

/** The process's own stdout and stderr. */
export const PROCESS_OUT: Out = {
  print: (text) => {
    process.stdout.write(text);
  },
  note: (text) => {
    process.stderr.write(text);
  },
};

/** How a scorecard runs one spec (the child's side) and the line its parent writes of it. */
export interface RunsOf<S, R> {
  runOne(spec: S): Promise<R>;
  describe(r: R): string;
}

/**
 * A scorecard script's entry: given `--one SPEC` it is the child and does that one run;
 * otherwise `main` runs with the script's own io, each run a child process of the script
 * (`scriptUrl`, its `import.meta.url`), `jobs` at a time.
 */
export function scorecardEntry<S, R>(
  name: string,
  one: string | undefined,
  scriptUrl: string,
  runs: RunsOf<S, R>,
  main: (io: SimIo<S, R>) => Promise<unknown>,
): Promise<void> {
  const script = fileURLToPath(scriptUrl);
  const io: SimIo<S, R> = {
    ...PROCESS_OUT,
    run: (specs, jobs) => runInChildren(script, specs, jobs, runs.describe),
  };
  return benchEntry(name, one, runs.runOne, async () => {
    await main(io);
  });
}

/**
 * A figure with `digits` decimals, or `missing` where there is none: not measured, no run
 * (from a `--from-json` that lacks it), or a ratio over nothing.
 */
export const fix = (v: number | null | undefined, digits: number, missing = "–") =>
  figure(v, digits, missing);

/** Tokens in millions, one decimal. */
export const mega = (v: number | undefined) => (v === undefined ? "–" : (v / 1e6).toFixed(1));

/** `a ÷ b`, or null where either is missing or `b` is 0. */
export const ratioOf = (a: number | null | undefined, b: number | null | undefined) =>
  a === null || a === undefined || b === null || b === undefined || b === 0 ? null : a / b;

/** The mean over the values that are there; null when none is. */
export function meanOf(xs: readonly (number | null)[]): number | null {
  const known = xs.filter((x): x is number => x !== null);
  return known.length === 0 ? null : mean(known);
}

/** `seed 7`, `seeds 7, 1`. */
export const seedsText = (seeds: readonly number[]) =>
  `seed${seeds.length > 1 ? "s" : ""} ${seeds.join(", ")}`;

/** `--json`: the document, indented by two, with a final newline. */
export function writeJson(file: string, doc: unknown): void {
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
}

/** The first of `results` that `match` accepts; a scorecard that lacks a run it made is a bug. */
export function findRun<R>(results: readonly R[], match: (r: R) => boolean, what: string): R {
  const r = results.find(match);
  if (r === undefined) throw new Error(`no run ${what}`);
  return r;
}
