/**
 * What a dying backend costs: `maitred serve --router tr` in front of N simulated backends, each
 * its own process as users run them, a closed-loop agent workload through it, and one backend
 * killed with SIGKILL part-way (its connections reset, new ones refused). The driver does not
 * retry (OpenAI clients would, and hide the router's losses), so every failure it sees is one the
 * router passed on. Prints:
 *   - steps answered, and failed requests by kind, before and after the kill;
 *   - "lost": failed requests whose client had received no byte: the router could have served
 *     them elsewhere (the goal is 0);
 *   - "cut mid-stream": streams already relaying when their backend died; their bytes are out, so
 *     no router can send them elsewhere (the agent's own retry takes them);
 *   - the router's retries and backend errors (`/metrics`), and how long until `/backends` showed
 *     the killed backend unhealthy.
 *
 *   node scripts/bench-backend-kill.ts [--backends 4] [--concurrency 32] [--time-scale 5]
 *       [--kill-at 20s] [--duration 60s] [--stream-share 0.5] [--num-gpu-blocks 4000]
 *       [--seed 1] [--workload deepseek] [--control]
 *
 * `--control` runs the same without killing anything, for the steps a full fleet answers in
 * the same two windows.
 */
import { abortableSleep, startClosedLoop } from "../src/bench/closed-loop.ts";
import { simBackendArgs, simBackendSettings } from "../src/bench/compare.ts";
import { discoverModel } from "../src/bench/discover-model.ts";
import { type MaitredProcess, startMaitredProcess } from "../src/bench/maitred-process.ts";
import { markdownTable } from "../src/bench/markdown-table.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";
import {
  backendsFlag,
  blocksFlag,
  concurrencyFlag,
  durationFlag,
  seedFlag,
  timeScaleFlag,
  workloadFlag,
} from "../src/bench/script-flags.ts";
import { startRouterProcess } from "../src/bench/start-router-for.ts";
import { createStepClient } from "../src/bench/step-client.ts";
import { duration, share } from "../src/config/values.ts";
import { wallClock } from "../src/runtime/clock.ts";
import { limitContext, loadWorkload, parseWorkloadArg } from "../src/workload/load-workload.ts";

const SPEC = {
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
const { values: a, parsed } = scriptArgs(SPEC);

const numBackends = Number(a.backends);
const concurrency = Number(a.concurrency);
const timeScale = Number(a["time-scale"]);
const killAtMs = parsed["kill-at"];
const durationMs = parsed.duration;
const streamShare = Number(a["stream-share"]);
const numGpuBlocks = Number(a["num-gpu-blocks"]);

progress(`starting ${numBackends} simulated backends and the router`);
const backends: MaitredProcess[] = [];
for (let i = 0; i < numBackends; i++) {
  const settings = simBackendSettings({ timeScale, numGpuBlocks }, i);
  backends.push(
    await startMaitredProcess(
      ["sim-backend", ...simBackendArgs(settings), "--log-level", "info"],
      "sim-backend listening",
    ),
  );
}
const urls = backends.map((b) => b.url);
const router = await startRouterProcess("tr", urls, timeScale, null);
const victim = backends[1];

async function backendHealthy(url: string): Promise<boolean | null> {
  try {
    const res = await fetch(`${router.url}/backends`);
    const doc = (await res.json()) as Record<string, { healthy: boolean }>;
    return doc[url]?.healthy ?? null;
  } catch {
    return null;
  }
}

async function metricValue(text: string, name: string): Promise<number> {
  let sum = 0;
  for (const line of text.split("\n"))
    if (line.startsWith(name)) sum += Number(line.split(" ").at(-1));
  return sum;
}

try {
  const target = await discoverModel(router.url);
  if (target === null) throw new Error(`no model served at ${router.url}`);
  const spec = parseWorkloadArg(a.workload, { seed: Number(a.seed) });
  const workload = await loadWorkload(
    target.maxModelLen ? limitContext(spec, target.maxModelLen) : spec,
  );
  const client = createStepClient({ url: router.url, connections: concurrency });
  const loop = startClosedLoop({
    workload,
    client,
    model: target.id,
    concurrency,
    timeScale,
    warmupMs: 0,
    durationMs,
    maxRetries: 0,
    streamShare,
    programIdPrefix: "kill-",
  });
  const started = wallClock.now();
  progress(
    `load running for ${durationMs / 1000} s; ${a.control ? "nothing killed (control)" : "backend 2 killed"} at ${killAtMs / 1000} s`,
  );
  const never = new AbortController().signal;
  await abortableSleep(wallClock, killAtMs, never);
  const killedAt = wallClock.now() - started;
  if (!a.control) await victim.kill();
  progress(
    `${a.control ? "split" : "killed"} at ${(killedAt / 1000).toFixed(1)} s; waiting for the run to end`,
  );
  let unhealthyAfterMs: number | null = null;
  while (!a.control && wallClock.now() - started < killAtMs + 30_000) {
    if ((await backendHealthy(victim.url)) === false) {
      unhealthyAfterMs = wallClock.now() - started - killedAt;
      break;
    }
    await abortableSleep(wallClock, 50, never);
  }
  const records = await loop.done;
  await client.close();
  const metrics = await (await fetch(`${router.url}/metrics`)).text();

  const before = records.steps.filter((s) => s.endMs < killedAt).length;
  const after = records.steps.length - before;
  const cut = records.errors.filter((e) => e.kind === "stream_error");
  const lost = records.errors.filter((e) => e.kind !== "stream_error");
  const kinds = new Map<string, number>();
  for (const e of records.errors) kinds.set(e.kind, (kinds.get(e.kind) ?? 0) + 1);

  console.log(
    `${numBackends} backends (sim, time scale ${timeScale}, ${numGpuBlocks} blocks), ${concurrency} programs of ${a.workload}, ` +
      `${Math.round(streamShare * 100)} % streamed; ${a.control ? "control run, nothing killed; split" : "backend 2 killed (SIGKILL)"} at ${(killedAt / 1000).toFixed(1)} s of ${(durationMs / 1000).toFixed(0)} s; no client retries`,
  );
  console.log("");
  console.log(
    markdownTable(
      ["measure", "value"],
      [
        ["steps answered before the kill", String(before)],
        ["steps answered after the kill", String(after)],
        ["requests lost (failed before any byte reached the client)", String(lost.length)],
        ["streams cut mid-answer (bytes already out)", String(cut.length)],
        [
          "router retries on another backend",
          String(await metricValue(metrics, "maitred_upstream_retries_total")),
        ],
        [
          "killed backend unhealthy after",
          unhealthyAfterMs === null ? "not within 30 s" : `${unhealthyAfterMs.toFixed(0)} ms`,
        ],
      ],
    ),
  );
  if (kinds.size > 0)
    console.log(`\nfailures by kind: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(", ")}`);
  process.exitCode = lost.length === 0 ? 0 : 1;
} finally {
  await router.close();
  await Promise.all(backends.map((b) => b.close()));
}
