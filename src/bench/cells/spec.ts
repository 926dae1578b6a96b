/**
 * `npm run bench:cells`'s flags, summary and runtime (what its `--help` prints), and the
 * settings a run takes, read from them.
 */

import { DEFAULT_BODY_BUFFER_BYTES } from "../../cells/haproxy-config.ts";
import { byteSize, integer, share } from "../../config/values.ts";
import { DEFAULT_PROFILE } from "../../engine/timing.ts";
import type { ScriptArgs, ScriptSpec } from "../script-args.ts";
import {
  blocksFlag,
  concurrencyFlag,
  durationFlag,
  profileFlag,
  seedFlag,
  timeScaleFlag,
  warmupFlag,
  workloadFlag,
} from "../script-flags.ts";

export const BENCH_CELLS_SPEC = {
  name: "bench:cells",
  summary:
    "Three cells behind HAProxy, one killed and restarted part-way: program affinity, requests lost, failover time, steps/min and CPU per phase, the ratio against lone routers, and the latency HAProxy adds.",
  runtime:
    "about 6 min (the defaults' own figure): --warmup + 3 × --phase, the lone-router pass and the latency requests; progress on stderr; needs haproxy (2.6+)",
  flags: {
    concurrency: concurrencyFlag("24", "programs in flight", { min: 3, max: 10_000 }),
    warmup: warmupFlag({ default: "30s" }, "before the first phase"),
    phase: durationFlag({ default: "60s" }, "each of stable, dead and back"),
    "time-scale": timeScaleFlag("2.5", "engines and tools run S times faster"),
    "num-gpu-blocks": blocksFlag("4000", "KV blocks per simulated backend", 100_000_000),
    profile: profileFlag(DEFAULT_PROFILE, "the backends' timing profile"),
    seed: seedFlag("seeds the workload", 2 ** 31),
    workload: workloadFlag({ description: "the workload, as `maitred bench --workload` names it" }),
    "stream-share": {
      arg: "<share>",
      default: "0.5",
      description: "share of programs streamed",
      check: share(),
    },
    "latency-requests": {
      arg: "<n>",
      default: "1000",
      description: "small latency requests each way",
      check: integer(0, 1_000_000),
    },
    "large-requests": {
      arg: "<n>",
      default: "300",
      description: "~200 KB latency requests each way",
      check: integer(0, 1_000_000),
    },
    "skip-lone": {
      type: "boolean",
      description: "leave out the lone-router pass (and so the ratio)",
    },
    "haproxy-log": {
      arg: "<file>",
      description: "also append HAProxy's log and the bench's marks to the file",
    },
    "haproxy-no-trim": {
      type: "boolean",
      description: "run HAProxy with glibc's heap trimming off",
    },
    "body-buffer": {
      arg: "<size>",
      default: String(DEFAULT_BODY_BUFFER_BYTES),
      description: "HAProxy's buffer: the largest body whose program id it reads",
      check: byteSize(),
    },
  },
} satisfies ScriptSpec;

/** What one run of the bench is given; times in ms. */
export interface CellsSettings {
  concurrency: number;
  warmupMs: number;
  /** The length of each of the three phases. */
  phaseMs: number;
  timeScale: number;
  numGpuBlocks: number;
  profile: string;
  seed: number;
  /** As `maitred bench --workload` names it. */
  workload: string;
  streamShare: number;
  /** Latency requests each way, small and ~200 KB. */
  latencyRequests: number;
  largeRequests: number;
  skipLone: boolean;
  /** Where HAProxy's log and the bench's marks are also appended. */
  haproxyLog: string | undefined;
  haproxyNoTrim: boolean;
  bodyBufferBytes: number;
}

/** The settings the command line gave. */
export function cellsSettings(args: ScriptArgs<typeof BENCH_CELLS_SPEC.flags>): CellsSettings {
  const { values: a, parsed: p } = args;
  return {
    concurrency: p.concurrency,
    warmupMs: p.warmup,
    phaseMs: p.phase,
    timeScale: p["time-scale"],
    numGpuBlocks: p["num-gpu-blocks"],
    profile: a.profile,
    seed: p.seed,
    workload: a.workload,
    streamShare: p["stream-share"],
    latencyRequests: p["latency-requests"],
    largeRequests: p["large-requests"],
    skipLone: a["skip-lone"],
    haproxyLog: a["haproxy-log"],
    haproxyNoTrim: a["haproxy-no-trim"],
    bodyBufferBytes: p["body-buffer"],
  };
}
