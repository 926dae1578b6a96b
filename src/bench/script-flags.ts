/**
 * The flags the scripts share, each declared once: a simulated run's window, its workload,
 * seeds, backends, KV blocks, time scale and program slots, and the scorecards' `--jobs`,
 * `--quick`, `--json` and `--one`. Each script still states what differs for it (its default,
 * its help text, a bound of its own), so `--help` and every check read as before; what no
 * longer differs from script to script (the form of a value, its parser, the usual words) is
 * here, so a fix to one is a fix to all.
 */
import { existsSync } from "node:fs";
import { duration, integer, listOfItems, parsedText, positive } from "../config/values.ts";
import { simSetting } from "../sim-server/options.ts";
import { SIMULATE_SETTINGS } from "../simulate/simulate-options.ts";
import { parseWorkloadArg } from "../workload/load-workload.ts";

/** The largest seed: seeds are 31-bit, as `maitred simulate --seed` takes them. */
export const MAX_SEED = 2 ** 31 - 1;

/** A flag's default: a value applied when it is not given, or words for `--help` only. */
type Default = { default: string } | { defaultText: string };

/** `--one SPEC`: the scorecards run each of their runs as a child process given this. */
export const ONE_FLAG = {
  description: "one run, as a child process (internal)",
  hidden: true,
};

/** `--jobs`: the scorecards' runs at once (sim-runs.ts's `jobsOf` reads it). */
export const JOBS_FLAG = {
  arg: "<n>",
  defaultText: "one per core",
  description: "runs at once, each its own child process",
  check: integer(1, 64),
};

/** `--quick`: the scorecards' short windows (sim-runs.ts's QUICK_WINDOW). */
export const QUICK_FLAG = {
  type: "boolean" as const,
  description: "a smoke run, not a measurement: 2m + 8m windows",
};

/** `--json FILE`: what else a script writes, said by the script. */
export const jsonFlag = (description = "also write every run as JSON") => ({
  arg: "<file>",
  description,
});

/** `--warmup`: a duration (`10m`, `30s`; 0 allowed), before the measured window. */
export const warmupFlag = <D extends Default>(d: D, description = "simulated warm-up") => ({
  arg: "<duration>",
  ...d,
  description,
  check: duration({ allowZero: true }),
});

/** `--duration`: the measured window, a duration above 0. */
export const durationFlag = <D extends Default>(d: D, description = "simulated steady window") => ({
  arg: "<duration>",
  ...d,
  description,
  check: duration(),
});

/** `--workload`: a preset, a trace file or a mix, parsed as `maitred` commands parse it. */
export const workloadFlag = (o: { default?: string; description?: string; arg?: string } = {}) => ({
  arg: o.arg ?? "<name|file|mix>",
  default: o.default ?? "deepseek",
  description: o.description ?? "the workload, as `maitred simulate --workload` names it",
  check: parsedText((w) => parseWorkloadArg(w)),
});

/** Seeds as a list, each a 31-bit integer. */
export const seedList = () => listOfItems(integer(0, MAX_SEED));

/** `--seeds`: a list of seeds, each run once per seed. */
export const seedsFlag = (defaultSeeds: string, description: string) => ({
  arg: "<list>",
  default: defaultSeeds,
  description,
  check: seedList(),
});

/** `--seed`: one seed, 1 unless given; `max` for a script whose bound is its own. */
export const seedFlag = (description: string, max = MAX_SEED) => ({
  arg: "<n>",
  default: "1",
  description,
  check: integer(0, max),
});

/** `--backends`: simulated backends, at most 64. */
export const backendsFlag = (defaultCount: string, description: string, min = 1) => ({
  arg: "<n>",
  default: defaultCount,
  description,
  check: integer(min, 64),
});

/** `--num-gpu-blocks` of a simulated run, checked as `maitred simulate` checks it. */
export const simBlocksFlag = <D extends Default>(d: D, description: string) => ({
  arg: "<n>",
  ...d,
  description,
  check: SIMULATE_SETTINGS.numGpuBlocks.schema,
});

/** `--num-gpu-blocks` of simulated backends a script starts as processes. */
export const blocksFlag = (defaultBlocks: string, description: string, max = MAX_SEED) => ({
  arg: "<n>",
  default: defaultBlocks,
  description,
  check: integer(2, max),
});

/** `--time-scale S`: the simulated engines (and tools) run S times faster. */
export const timeScaleFlag = (defaultScale: string, description: string) => ({
  arg: "<S>",
  default: defaultScale,
  description,
  check: positive(),
});

/** `--concurrency`: program slots of a closed loop. */
export const concurrencyFlag = (
  defaultSlots: string,
  description: string,
  bounds: { min?: number; max?: number } = {},
) => ({
  arg: "<n>",
  default: defaultSlots,
  description,
  check: integer(bounds.min ?? 1, bounds.max ?? 100_000),
});

/** `--profile`: a simulated engine's timing profile, by name. */
export const profileFlag = (defaultProfile: string, description: string) => ({
  arg: "<name>",
  default: defaultProfile,
  description,
  check: simSetting("profile").schema,
});

/** `--from-json a.json[,b.json]`: files that are there (what is in them is read when they are). */
export const fromJsonFlag = (description: string) => ({
  arg: "<a.json[,b.json]>",
  description,
  check: parsedText((files) => {
    const missing = files.split(",").filter((f) => !existsSync(f));
    if (missing.length > 0)
      throw new Error(`no such file ${missing.map((f) => JSON.stringify(f)).join(", ")}`);
    return files;
  }),
});
