/**
 * `npm run bench:race`: maitred against the original ThunderAgent and the engine alone, live.
 * Each contestant is a
 * router process in front of two simulated backends of its own (`maitred bench compare`'s
 * cluster: DeepSeek trace, 64 programs, 13,000 KV blocks per backend, `--time-scale 5`): the
 * original at its tr defaults (periods scaled as maitred's), the engine alone (maitred
 * `--router default`, which holds nothing: the baseline a user would otherwise pick), and
 * maitred tr at each `--tail` preset asked for. Every tier size is raced `--repeats` times; within a repeat the contestants
 * run one after the other, in an order rotated from repeat to repeat, so a slow spell of a
 * shared machine does not fall on one contestant. A ratio is read per repeat (a contestant's
 * run ÷ the original's, or the engine alone's, of the same repeat), with its spread.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { integer, listOfItems, nonNegative, oneOf, positive, text } from "../../config/values.ts";
import { TAIL_NAMES, type TailPreset } from "../../core/scheduler-config.ts";
import { ConfigError } from "../../errors.ts";
import { resolveCompareFlags } from "../bench-options.ts";
import { type RouterStarter, runCompare } from "../compare.ts";
import type { RunReport } from "../report.ts";
import type { ScriptArgs, ScriptSpec } from "../script-args.ts";
import { durationFlag, fromJsonFlag, jsonFlag, seedFlag, warmupFlag } from "../script-flags.ts";
import { routerProcessStarter } from "../start-router-for.ts";
import { originalStarter } from "./original-process.ts";
import {
  ENGINE_ALONE,
  ORIGINAL,
  type RaceResult,
  raceChart,
  raceReport,
  readRaces,
} from "./race-report.ts";

export const RACE_SPEC = {
  name: "bench:race",
  summary:
    "maitred tr at each --tail preset against the original ThunderAgent and the engine alone, live, each router its own process before two simulated backends of its own, per host tier, repeated with the order rotated; a table per tier with every race and the ratios' spread.",
  runtime:
    "about 4.5 min a race at the defaults (60 s warm-up + 180 s window at --time-scale 5, and start-up): 2 tiers × 4 contestants × 2 repeats ≈ 72 min; nothing else should run beside it",
  flags: {
    thunderagent: {
      arg: "<gitdir>",
      description:
        "the git directory of a snapshot of the original's public repository (ThunderAgent-org/ThunderAgent); without it, maitred's presets race the engine alone and each other",
      check: text(),
    },
    python: {
      arg: "<path>",
      default: "/usr/bin/python3",
      description:
        "a Python with FastAPI, httpx and uvicorn for the original (Debian: apt-get install -y python3-fastapi python3-httpx python3-uvicorn)",
      check: text(),
    },
    "no-engine-alone": {
      type: "boolean",
      description:
        "leave out the engine alone (maitred --router default, which holds nothing), raced by default as the baseline a user would otherwise pick",
    },
    presets: {
      arg: "<list>",
      default: "bounded,throughput",
      description: "maitred's --tail presets, a contestant each",
      check: listOfItems(oneOf(TAIL_NAMES)),
    },
    sizes: {
      arg: "<list>",
      default: "0,200",
      description: "host KV tier per backend, GiB (each a race of its own)",
      check: listOfItems(nonNegative()),
    },
    repeats: {
      arg: "<n>",
      default: "2",
      description: "races per tier, the contestants' order rotated each time",
      check: integer(1, 100),
    },
    seed: seedFlag("the workload's seed, the same in every race"),
    concurrency: {
      arg: "<n>",
      default: "64",
      description: "programs in flight",
      check: integer(1, 10_000),
    },
    "num-gpu-blocks": {
      arg: "<n>",
      default: "13000",
      description: "KV blocks per simulated backend",
      check: integer(2, 2 ** 31 - 1),
    },
    "time-scale": {
      arg: "<s>",
      default: "5",
      description: "the backends and tools run S times real time",
      check: positive(),
    },
    warmup: warmupFlag({ default: "60s" }, "warm-up before the window (wall time)"),
    duration: durationFlag({ default: "180s" }, "the measured window (wall time)"),
    json: jsonFlag("also write every race as JSON, rewritten after each race"),
    svg: {
      arg: "<file>",
      description:
        "draw the live frontier: per tier, each router's steps/min against its step p99 (the means over the repeats)",
      check: text(),
    },
    "from-json": fromJsonFlag(
      "report (and with --svg draw) the races earlier --json files hold, racing nothing (several files are read as one run, each file's repeats numbered after the previous ones'; --json writes them joined); the race's other flags are ignored",
    ),
  },
} satisfies ScriptSpec;

/** The flags as given (`values`, read again by bench compare's parser) and as checked (`parsed`). */
export type RaceArgs = Pick<ScriptArgs<typeof RACE_SPEC.flags>, "values" | "parsed">;

export const maitredName = (preset: TailPreset) => `maitred ${preset}`;

/**
 * The engine alone: `start`'s router as the plain proxy (`--router default`) before the same
 * backends, whatever mode the race's cluster asks its contestants for (tr).
 */
export const asEngineAlone =
  (start: RouterStarter): RouterStarter =>
  (_mode, backends, timeScale, kvBytesPerToken) =>
    start("default", backends, timeScale, kvBytesPerToken);

export interface Contestant {
  name: string;
  start: RouterStarter;
}

/** The contestants in repeat `repeat`'s order: the list rotated by one each repeat. */
export function raceOrder<T>(contestants: readonly T[], repeat: number): T[] {
  const k = repeat % contestants.length;
  return [...contestants.slice(k), ...contestants.slice(0, k)];
}

/** What a race of one contestant runs: the bench compare cluster, its router started its way. */
export type RunOne = (sizeGiB: number, start: RouterStarter) => Promise<RunReport>;

const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);

/** Every race, in the order run; `note` hears a line per race. */
export async function runRace(
  contestants: readonly Contestant[],
  sizes: readonly number[],
  repeats: number,
  runOne: RunOne,
  note: (line: string) => void,
  /** Every race so far, after each one (a long run's finished races are kept if one fails). */
  onRace: (so: readonly RaceResult[]) => void = () => {},
): Promise<RaceResult[]> {
  const results: RaceResult[] = [];
  const total = repeats * sizes.length * contestants.length;
  for (let repeat = 0; repeat < repeats; repeat++) {
    for (const sizeGiB of sizes) {
      for (const c of raceOrder(contestants, repeat)) {
        const t0 = performance.now();
        const r = await runOne(sizeGiB, c.start);
        const result: RaceResult = {
          repeat: repeat + 1,
          sizeGiB,
          contestant: c.name,
          stepsPerMin: r.steps_per_min,
          stepP95S: seconds(r.step_latency_ms.p95),
          stepP99S: seconds(r.step_latency_ms.p99),
          cacheHitRate: r.prompt_tokens.cache_hit_rate,
          wallS: (performance.now() - t0) / 1000,
        };
        results.push(result);
        onRace(results);
        note(
          `race ${results.length}/${total}: repeat ${result.repeat}, ${sizeGiB} GiB, ${c.name}: ${result.stepsPerMin} steps/min, step p99 ${result.stepP99S?.toFixed(1) ?? "–"} s`,
        );
      }
    }
  }
  return results;
}

/** `bench compare`'s settings for one race at `sizeGiB`, read by its own parser. */
export function raceCompareSettings({ values: args }: RaceArgs, sizeGiB: number) {
  return resolveCompareFlags({
    workload: "deepseek",
    concurrency: args.concurrency,
    timeScale: args["time-scale"],
    warmup: args.warmup,
    duration: args.duration,
    seed: args.seed,
    numBackends: "2",
    numGpuBlocks: args["num-gpu-blocks"],
    kvOffloadingSize: String(sizeGiB),
    modes: "tr",
  });
}

/**
 * The contestants the flags name: the original (with `--thunderagent`), the engine alone
 * (unless `--no-engine-alone`), then each preset.
 */
export function contestantsOf({ values, parsed }: RaceArgs): Contestant[] {
  const out: Contestant[] = [];
  if (parsed.thunderagent !== undefined) {
    out.push({
      name: ORIGINAL,
      start: originalStarter({ gitDir: parsed.thunderagent, python: parsed.python }),
    });
  }
  if (values["no-engine-alone"] !== true)
    out.push({ name: ENGINE_ALONE, start: asEngineAlone(routerProcessStarter({})) });
  for (const p of parsed.presets) {
    out.push({ name: maitredName(p), start: routerProcessStarter({ MAITRED_TAIL: p }) });
  }
  return out;
}

/**
 * Ctrl-C (or a supervisor's SIGTERM) ends a race: the finished races' table is printed and the
 * process exits with the signal's code, which stops every router the race started
 * (maitred-process.ts `endsWithUs`).
 */
export function stopRace(
  signal: NodeJS.Signals,
  finished: readonly RaceResult[],
  io: { note(line: string): void; print(text: string): void },
  exit: (code: number) => void = process.exit,
): void {
  io.note(`${signal}: the race stops; ${finished.length} race(s) finished`);
  if (finished.length > 0) io.print(`${raceReport(finished)}\n`);
  exit(signal === "SIGINT" ? 130 : 143);
}

/** Every race the flags ask for, `--json` of them after each, stopped cleanly by a signal. */
async function runAll(
  args: RaceArgs,
  io: { note(line: string): void; print(text: string): void },
): Promise<RaceResult[]> {
  const { json } = args.values;
  let finished: readonly RaceResult[] = [];
  const onSignal = (signal: NodeJS.Signals) => stopRace(signal, finished, io);
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return runRace(
    contestantsOf(args),
    args.parsed.sizes,
    args.parsed.repeats,
    async (sizeGiB, start) => {
      const [report] = await runCompare({
        ...raceCompareSettings(args, sizeGiB),
        progress: false,
        startRouter: start,
      });
      return report;
    },
    io.note,
    (so) => {
      finished = so;
      if (json !== undefined) writeFileSync(json, `${JSON.stringify(so, null, 2)}\n`);
    },
  ).finally(() => {
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
  });
}

/**
 * The script's run: every race (or, with `--from-json`, the races saved by an earlier one),
 * the report on stdout, `--json` of them and `--svg`'s chart. A saved file that holds no races
 * is a ConfigError.
 */
export async function race(
  args: RaceArgs,
  io: { note(line: string): void; print(text: string): void },
): Promise<RaceResult[]> {
  const from = args.parsed["from-json"];
  let results: RaceResult[];
  if (from === undefined) {
    results = await runAll(args, io);
  } else {
    try {
      results = readRaces(from, (f) => readFileSync(f, "utf8"));
    } catch (err) {
      throw new ConfigError("--from-json", (err as Error).message);
    }
    // The races read, as one run (several files joined), for a later --from-json.
    const { json } = args.values;
    if (json !== undefined) writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
  }
  io.print(`${raceReport(results)}\n`);
  const { svg } = args.parsed;
  if (svg !== undefined) writeFileSync(svg, raceChart(results));
  return results;
}
