/**
 * `npm run bench:backend-kill`: what a dying backend costs. `maitred serve --router tr` in front
 * of N simulated backends, each its own process as users run them, a closed-loop agent workload
 * through it, and the second backend killed with SIGKILL part-way (its connections reset, new
 * ones refused). The driver does not retry (OpenAI clients would, and hide the router's losses),
 * so every failure it sees is one the router passed on. A control run kills nothing, for the
 * steps a full fleet answers in the same two windows. backend-kill-report.ts reads the run.
 */
import { duration, share } from "../../config/values.ts";
import { wallClock } from "../../runtime/clock.ts";
import { limitContext, loadWorkload, parseWorkloadArg } from "../../workload/load-workload.ts";
import { abortableSleep, startClosedLoop } from "../closed-loop.ts";
import { simBackendArgs, simBackendSettings } from "../compare.ts";
import { discoverModel } from "../discover-model.ts";
import { type MaitredProcess, startMaitredProcess } from "../maitred-process.ts";
import type { ScriptSpec } from "../script-args.ts";
import {
  backendsFlag,
  blocksFlag,
  concurrencyFlag,
  durationFlag,
  seedFlag,
  timeScaleFlag,
  workloadFlag,
} from "../script-flags.ts";
import { startRouterProcess } from "../start-router-for.ts";
import { createStepClient } from "../step-client.ts";
import { type BackendKillResult, killOutcome, metricSum } from "./backend-kill-report.ts";

export const BACKEND_KILL_SPEC = {
  name: "bench:backend-kill",
  summary:
    "What a dying backend costs: `maitred serve --router tr` over N simulated backends, one killed with SIGKILL part-way; steps before and after, requests lost, streams cut, retries, time to unhealthy.",
  runtime:
    "about 70 s: --duration (60 s) plus starting the backends and the router; progress on stderr",
  flags: {
    backends: backendsFlag(
      "4",
      "simulated backends, each its own process (the second is killed)",
      2,
    ),
    concurrency: concurrencyFlag("32", "programs in flight"),
    "time-scale": timeScaleFlag("5", "engines and tools run S times faster"),
    "kill-at": {
      arg: "<duration>",
      default: "20s",
      description: "wall time into the run when the backend is killed",
      check: duration(),
    },
    duration: durationFlag({ default: "60s" }, "wall time of the run"),
    "stream-share": {
      arg: "<share>",
      default: "0.5",
      description: "share of programs streamed",
      check: share(),
    },
    "num-gpu-blocks": blocksFlag("4000", "KV blocks per backend"),
    seed: seedFlag("seeds the workload"),
    workload: workloadFlag({ description: "the workload, as `maitred bench --workload` names it" }),
    control: {
      type: "boolean",
      description: "kill nothing: what a full fleet answers in the same two windows",
    },
  },
} satisfies ScriptSpec;

/** How long after the kill the router's `/backends` is watched for the backend's fall. */
const UNHEALTHY_WITHIN_MS = 30_000;
const POLL_MS = 50;

export interface BackendKillOptions {
  numBackends: number;
  concurrency: number;
  timeScale: number;
  killAtMs: number;
  durationMs: number;
  streamShare: number;
  numGpuBlocks: number;
  seed: number;
  workload: string;
  control: boolean;
  progress?: (line: string) => void;
}

/** Whether the router at `routerUrl` holds `backendUrl` healthy; null if it cannot say. */
export async function backendHealthy(
  routerUrl: string,
  backendUrl: string,
): Promise<boolean | null> {
  try {
    const res = await fetch(`${routerUrl}/backends`);
    const doc = (await res.json()) as Record<string, { healthy: boolean }>;
    return doc[backendUrl]?.healthy ?? null;
  } catch {
    return null;
  }
}

/** The run: backends and router started, the load, the kill, the router's account after. */
export async function runBackendKill(o: BackendKillOptions): Promise<BackendKillResult> {
  const say = o.progress ?? (() => {});
  say(`starting ${o.numBackends} simulated backends and the router`);
  const backends: MaitredProcess[] = [];
  try {
    for (let i = 0; i < o.numBackends; i++) {
      const settings = simBackendSettings(
        { timeScale: o.timeScale, numGpuBlocks: o.numGpuBlocks },
        i,
      );
      backends.push(
        await startMaitredProcess(
          ["sim-backend", ...simBackendArgs(settings), "--log-level", "info"],
          "sim-backend listening",
        ),
      );
    }
    const router = await startRouterProcess(
      "tr",
      backends.map((b) => b.url),
      o.timeScale,
      null,
    );
    try {
      return await underLoad(o, router.url, backends[1], say);
    } finally {
      await router.close();
    }
  } finally {
    await Promise.all(backends.map((b) => b.close()));
  }
}

async function underLoad(
  o: BackendKillOptions,
  routerUrl: string,
  victim: MaitredProcess,
  say: (line: string) => void,
): Promise<BackendKillResult> {
  const target = await discoverModel(routerUrl);
  if (target === null) throw new Error(`no model served at ${routerUrl}`);
  const spec = parseWorkloadArg(o.workload, { seed: o.seed });
  const workload = await loadWorkload(
    target.maxModelLen ? limitContext(spec, target.maxModelLen) : spec,
  );
  const client = createStepClient({ url: routerUrl, connections: o.concurrency });
  const loop = startClosedLoop({
    workload,
    client,
    model: target.id,
    concurrency: o.concurrency,
    timeScale: o.timeScale,
    warmupMs: 0,
    durationMs: o.durationMs,
    maxRetries: 0,
    streamShare: o.streamShare,
    programIdPrefix: "kill-",
  });
  const started = wallClock.now();
  say(
    `load running for ${o.durationMs / 1000} s; ${o.control ? "nothing killed (control)" : "backend 2 killed"} at ${o.killAtMs / 1000} s`,
  );
  const never = new AbortController().signal;
  await abortableSleep(wallClock, o.killAtMs, never);
  const killedAtMs = wallClock.now() - started;
  if (!o.control) await victim.kill();
  say(
    `${o.control ? "split" : "killed"} at ${(killedAtMs / 1000).toFixed(1)} s; waiting for the run to end`,
  );
  let unhealthyAfterMs: number | null = null;
  while (!o.control && wallClock.now() - started < o.killAtMs + UNHEALTHY_WITHIN_MS) {
    if ((await backendHealthy(routerUrl, victim.url)) === false) {
      unhealthyAfterMs = wallClock.now() - started - killedAtMs;
      break;
    }
    await abortableSleep(wallClock, POLL_MS, never);
  }
  const records = await loop.done;
  await client.close();
  const metrics = await (await fetch(`${routerUrl}/metrics`)).text();
  return {
    ...killOutcome(records, killedAtMs),
    numBackends: o.numBackends,
    timeScale: o.timeScale,
    numGpuBlocks: o.numGpuBlocks,
    concurrency: o.concurrency,
    workload: o.workload,
    streamShare: o.streamShare,
    control: o.control,
    killedAtMs,
    durationMs: o.durationMs,
    retries: metricSum(metrics, "maitred_upstream_retries_total"),
    unhealthyAfterMs,
  };
}
