/**
 * `npm run soak`'s flags, summary and runtime (what its `--help` prints), and the settings a
 * run takes, read from them. The router runs in wall time whatever the time scale: its tick,
 * poll timeout, idle timeout and max pause are wall seconds, as an operator would set them, and
 * the invariants hold it to them; only the engines and the agents' tool times run
 * `--time-scale` times faster.
 */
import { availableParallelism } from "node:os";
import { integer, oneOf, parsedText, positive, share } from "../../config/values.ts";
import type { ScriptArgs, ScriptSpec } from "../script-args.ts";
import {
  backendsFlag,
  blocksFlag,
  concurrencyFlag,
  jsonFlag,
  seedFlag,
  timeScaleFlag,
} from "../script-flags.ts";
import { parseCpuList } from "./cpus.ts";
import type { InvariantLimits } from "./invariants.ts";

/** `--router-cpus`: a taskset list of this machine's CPUs that leaves at least one for the rest. */
const cpuList = parsedText((list) => parseCpuList(list, availableParallelism()));
const wallSeconds = (what: string, fallback: string) => ({
  arg: "<s>",
  default: fallback,
  description: `the router's ${what}, wall seconds`,
  check: positive(),
});

export const SOAK_SPEC = {
  name: "soak",
  summary:
    "A day of faults: `maitred serve` over simulated backends under a closed loop of agent programs at a high time scale, faults on a seeded schedule, invariants checked all along; prints violations as they happen, then a table; exits 1 if an invariant failed.",
  runtime:
    "about 21 min: --minutes (20) of load, then up to --idle-timeout + 30 s for /programs to empty (recorded: 20.0 min of wall time for 24 simulated hours); status lines as it goes",
  flags: {
    minutes: {
      arg: "<m>",
      default: "20",
      description: "wall minutes of load",
      check: positive(),
    },
    "time-scale": timeScaleFlag(
      "72",
      "engines and tool times run S times faster (72: a day in 20 min)",
    ),
    backends: backendsFlag(
      "2",
      "simulated backends per router (per cell with --cells), each its own process",
    ),
    router: {
      arg: "<mode>",
      default: "tr",
      description: "tr or default",
      check: oneOf(["tr", "default"]),
    },
    seed: seedFlag("seeds the workload and the fault schedule"),
    concurrency: concurrencyFlag("96", "program slots of the closed loop"),
    "trace-share": {
      arg: "<share>",
      default: "0.1",
      description: "slots for the DeepSeek and Gemini traces; short programs take the rest",
      check: share(),
    },
    unreleased: {
      arg: "<share>",
      default: "0.3",
      description: "share of programs their client never releases",
      check: share(),
    },
    "stream-share": {
      arg: "<share>",
      default: "0.25",
      description: "share of programs streamed",
      check: share(),
    },
    "num-gpu-blocks": blocksFlag("6000", "KV blocks per backend"),
    "faults-per-kind": {
      arg: "<n>",
      default: "3",
      description: "faults of each kind, never overlapping",
      check: integer(1, 10_000),
    },
    burst: {
      arg: "<n>",
      default: "200",
      description: "new programs a burst fault sends at once",
      check: integer(0, 1_000_000),
    },
    "idle-timeout": wallSeconds("--idle-timeout", "45"),
    "max-pause": wallSeconds("--max-pause", "300"),
    "poll-timeout": wallSeconds("--poll-timeout", "2"),
    "scheduler-interval": wallSeconds("--scheduler-interval", "1"),
    "sample-every": {
      arg: "<s>",
      default: "5",
      description: "seconds between invariant checks and samples",
      check: positive(),
    },
    svg: {
      arg: "<file>",
      description: "a chart of the router's memory, CPU and event-loop delay over the run",
    },
    json: jsonFlag("also write the samples, the faults and the violations as JSON"),
    "log-file": {
      arg: "<file>",
      defaultText: "router.log in a temporary folder",
      description: "where the router's log goes",
    },
    cells: {
      arg: "<n>",
      default: "0",
      description: "cells behind HAProxy instead of one router (needs haproxy); 0: one router",
      check: integer(0, 26),
    },
    "router-cpus": {
      arg: "<list>",
      defaultText: "no pinning",
      description: "taskset CPUs for the router; the soak, backends and HAProxy get the others",
      check: cpuList,
    },
    "router-node-options": {
      arg: "<flags>",
      defaultText: "none",
      description:
        "NODE_OPTIONS for the router alone, e.g. --max-semi-space-size=4 for a smaller young generation",
    },
  },
} satisfies ScriptSpec;

const MS = 1000;
/** The longest a request runs once seated: the bound of "reasoning-without-request". */
const MAX_REQUEST_MS = 60 * MS;

/** A soak's settings: every time in wall milliseconds. */
export interface SoakSettings {
  /** `--minutes` and `--num-gpu-blocks` as given, for the header line. */
  text: { minutes: string; numGpuBlocks: string };
  router: "tr" | "default";
  durationMs: number;
  timeScale: number;
  /** Cells behind HAProxy; 0 for one router driven directly. */
  cells: number;
  /** Backends per router (per cell with `--cells`). */
  backendsPerRouter: number;
  /** Backends in all, over every cell. */
  totalBackends: number;
  seed: number;
  concurrency: number;
  traceShare: number;
  unreleased: number;
  streamShare: number;
  numGpuBlocks: number;
  faultsPerKind: number;
  burst: number;
  pollTimeoutMs: number;
  tickMs: number;
  idleTimeoutMs: number;
  maxPauseMs: number;
  sampleMs: number;
  /** No fault in the warm-up; the router settles in the tail, with no fault either. */
  warmupMs: number;
  tailMs: number;
  /**
   * When the RSS baseline is read: after the warm-up and after the idle timeout, so the
   * programs whose clients never release them have reached their steady number.
   */
  baselineMs: number;
  /** The checks' bounds: a tick to act and a sample's age on top of the router's own. */
  limits: InvariantLimits;
  /** How long after a fault a failure is still its doing: the router's time to notice. */
  graceMs: number;
  routerCpus: string | undefined;
  routerNodeOptions: string | undefined;
  logFile: string | undefined;
}

/** The settings of a run, from its flags (every figure already checked by the flags). */
export function soakSettings(args: ScriptArgs<typeof SOAK_SPEC.flags>): SoakSettings {
  const a = args.values;
  const num = (k: keyof typeof a) => Number(a[k]);
  const durationMs = num("minutes") * 60 * MS;
  const cells = num("cells");
  const backendsPerRouter = num("backends");
  const pollTimeoutMs = num("poll-timeout") * MS;
  const tickMs = num("scheduler-interval") * MS;
  const idleTimeoutMs = num("idle-timeout") * MS;
  const maxPauseMs = num("max-pause") * MS;
  const sampleMs = num("sample-every") * MS;
  const warmupMs = Math.min(60 * MS, durationMs * 0.1);
  return {
    text: { minutes: a.minutes, numGpuBlocks: a["num-gpu-blocks"] },
    router: args.parsed.router,
    durationMs,
    timeScale: num("time-scale"),
    cells,
    backendsPerRouter,
    totalBackends: Math.max(1, cells) * backendsPerRouter,
    seed: num("seed"),
    concurrency: num("concurrency"),
    traceShare: num("trace-share"),
    unreleased: num("unreleased"),
    streamShare: num("stream-share"),
    numGpuBlocks: num("num-gpu-blocks"),
    faultsPerKind: num("faults-per-kind"),
    burst: num("burst"),
    pollTimeoutMs,
    tickMs,
    idleTimeoutMs,
    maxPauseMs,
    sampleMs,
    warmupMs,
    tailMs: warmupMs,
    baselineMs: Math.max(warmupMs, idleTimeoutMs + 15 * MS),
    limits: { maxRequestMs: MAX_REQUEST_MS, maxPauseMs, slackMs: 2 * tickMs + sampleMs },
    graceMs: 2 * tickMs + 3 * pollTimeoutMs,
    routerCpus: a["router-cpus"],
    routerNodeOptions: a["router-node-options"],
    logFile: a["log-file"],
  };
}
