/**
 * A day of faults (`npm run soak`): `maitred serve` in front of N simulated backends, each its own
 * process, driven by a closed loop of agent programs at a high time scale for a wall time, with
 * faults injected on a seeded schedule (src/bench/soak-schedule.ts) and the router's invariants
 * checked every few seconds from its own endpoints (src/bench/soak-invariants.ts), its memory and
 * CPU sampled all along. Prints violations as they happen, then a table; exits 1 if an invariant
 * failed.
 *
 *   node scripts/soak.ts [--minutes 20] [--time-scale 72] [--backends 2] [--router tr]
 *       [--seed 1] [--concurrency 96] [--trace-share 0.1] [--unreleased 0.3]
 *       [--stream-share 0.25] [--num-gpu-blocks 6000] [--faults-per-kind 3] [--burst 200]
 *       [--idle-timeout 45] [--max-pause 300] [--poll-timeout 2] [--scheduler-interval 1]
 *       [--sample-every 5] [--svg FILE] [--json FILE] [--log-file FILE] [--cells N]
 *       [--router-cpus LIST]
 *
 * `--cells N` runs N cells instead of one router: each a `maitred serve --cell cell-<letter>`
 * with `--backends` sim-backends of its own, behind HAProxy with the configuration
 * `maitred cells haproxy-config` writes (src/bench/haproxy-process.ts; needs `haproxy`). The load
 * goes through HAProxy; the backend faults go round every cell's backends, and with two cells or
 * more a cell's `serve` is also killed (SIGKILL) and restarted empty on its port. The invariants
 * are checked on every cell, memory and CPU sampled per cell; the access log is every cell's
 * lines summed, against the requests sent and HAProxy's retries.
 *
 * The router runs in wall time whatever the time scale: its tick, poll timeout, idle timeout and
 * max pause are wall seconds, as an operator would set them, and the invariants hold it to them.
 * Only the engines and the agents' tool times run `--time-scale` times faster.
 */
import { spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { parsePrometheusText, sumOf } from "../src/backends/prometheus-text.ts";
import { startClosedLoop } from "../src/bench/closed-loop.ts";
import {
  type SimBackendSettings,
  simBackendArgs,
  simBackendSettings,
} from "../src/bench/compare.ts";
import { discoverModel } from "../src/bench/discover-model.ts";
import {
  HAPROXY_MISSING,
  type HaproxyProcess,
  haproxyInstalled,
  startHaproxy,
} from "../src/bench/haproxy-process.ts";
import {
  type MaitredProcess,
  startMaitredProcess,
  startServeProcess,
} from "../src/bench/maitred-process.ts";
import { markdownTable } from "../src/bench/markdown-table.ts";
import { percentile } from "../src/bench/percentile.ts";
import { processCpuSeconds, processRssBytes } from "../src/bench/process-stats.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";
import {
  backendsFlag,
  blocksFlag,
  concurrencyFlag,
  jsonFlag,
  seedFlag,
  timeScaleFlag,
} from "../src/bench/script-flags.ts";
import { type Sample, soakChart } from "../src/bench/soak-chart.ts";
import {
  type AccessLine,
  accessCountText,
  accessLogViolation,
  attributeFailures,
  bookDrift,
  createInvariantChecker,
  drainedViolations,
  type FaultWindow,
  heldTooLong,
  INVARIANTS,
  type InvariantChecker,
  inAnyWindow,
  isFailure,
  type ProgramSample,
  parseAccessLine,
  type RouterSample,
  type Violation,
} from "../src/bench/soak-invariants.ts";
import {
  CELL_FAULT_KINDS,
  FAULT_KINDS,
  type Fault,
  type FaultKind,
  faultSchedule,
} from "../src/bench/soak-schedule.ts";
import { createStepClient, type StepClient } from "../src/bench/step-client.ts";
import { integer, oneOf, parsedText, positive, share } from "../src/config/values.ts";
import { textOfTokens } from "../src/engine/tokenizer.ts";
import { EVENT_LOOP_SAMPLING_MS } from "../src/metrics/process-metrics.ts";
import { limitContext, loadWorkload, parseWorkloadArg } from "../src/workload/load-workload.ts";
import { createRng } from "../src/workload/prng.ts";

/**
 * `--router-cpus`: a taskset list of CPUs on this machine that leaves at least one for the
 * soak, the backends and HAProxy.
 */
const cpuList = parsedText((list) => {
  const n = availableParallelism();
  const chosen = new Set(list.split(",").map((x) => Number(x.trim())));
  const bad = [...chosen].some((c) => !Number.isInteger(c) || c < 0 || c >= n);
  if (bad || chosen.size >= n)
    throw new Error(
      `must list CPUs in [0, ${n - 1}] separated by commas, leaving one for the rest`,
    );
  return [...chosen];
});
const wallSeconds = (what: string, fallback: string) => ({
  arg: "<s>",
  default: fallback,
  description: `the router's ${what}, wall seconds`,
  check: positive(),
});

const SPEC = {
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
const { values: a, parsed } = scriptArgs(SPEC);

/** Cells behind HAProxy; 0 for one router driven directly. */
const numCells = Number(a.cells);
if (numCells > 0 && !haproxyInstalled()) {
  console.error(HAPROXY_MISSING);
  process.exit(2);
}
const router = parsed.router;

/**
 * `--router-cpus 1` (a taskset list) runs the router (every cell) on those CPUs and the soak
 * itself, the simulated backends and HAProxy on the others, as an operator gives a router its
 * own core: on a small machine the driver and the backends otherwise take the router's CPU,
 * and its event-loop delay measures them, not it.
 */
function cpuSets(list: string | undefined): { router: string; others: string } | null {
  if (list === undefined) return null;
  const n = availableParallelism();
  // cpuList checked the list with the flags.
  const chosen = new Set(list.split(",").map((x) => Number(x.trim())));
  const others = Array.from({ length: n }, (_, i) => i).filter((i) => !chosen.has(i));
  if (spawnSync("taskset", ["-V"]).error !== undefined) {
    console.error("--router-cpus needs taskset (util-linux): apt-get install util-linux");
    process.exit(2);
  }
  return { router: [...chosen].join(","), others: others.join(",") };
}
const cpus = cpuSets(a["router-cpus"]);
/** Pin every thread of `pid` to `list` (a taskset list); a failure is said, not fatal. */
function pin(pid: number, list: string | undefined): void {
  if (list === undefined) return;
  const r = spawnSync("taskset", ["-a", "-p", "-c", list, String(pid)]);
  if (r.status !== 0) console.error(`taskset could not pin ${pid} to ${list}: ${r.stderr}`);
}
pin(process.pid, cpus?.others);
const MS = 1000;
// Every numeric flag was checked with the flags, before any process starts, so a typo leaves
// nothing running.
const num = (k: keyof typeof a) => Number(a[k]);
const durationMs = num("minutes") * 60 * MS;
const timeScale = num("time-scale");
/** Backends per router (per cell with `--cells`). */
const numBackends = num("backends");
const totalBackends = Math.max(1, numCells) * numBackends;
const seed = num("seed");
const concurrency = num("concurrency");
const traceShare = num("trace-share");
const pollTimeoutMs = num("poll-timeout") * MS;
const tickMs = num("scheduler-interval") * MS;
const idleTimeoutMs = num("idle-timeout") * MS;
const maxPauseMs = num("max-pause") * MS;
const sampleMs = num("sample-every") * MS;
const burstSize = num("burst");
// The warm-up (no fault; RSS after it is the baseline) and the tail (no fault; the router settles).
const warmupMs = Math.min(60 * MS, durationMs * 0.1);
const tailMs = warmupMs;
/**
 * The RSS baseline: after the warm-up and after the idle timeout, so the programs whose clients
 * never release them have reached their steady number.
 */
const baselineMs = Math.max(warmupMs, idleTimeoutMs + 15 * MS);
/** Requests each disconnect fault sends. */
const DISCONNECTS = 4;
/** Output of a disconnect probe: long enough that it is still running when its client leaves. */
const PROBE_TOKENS = 4000;
/** A plain answer comes whole, so a client gone this soon left before its head. */
const BEFORE_HEAD_MS = 30;
/** A stream with its head and no token this long after is held. */
const HELD_AFTER_MS = 300;
/** Large new programs per backend a held disconnect sends when no program is paused. */
const PRESSURE_PER_BACKEND = 4;
/** How long a mid-stream probe waits for its first token before it gives up. */
const STREAM_WAIT_MS = 10_000;
/** How long HAProxy gets to see every cell UP, at the start and after a cell's restart. */
const CELLS_UP_TIMEOUT_MS = 30_000;

// ---- the workload: DeepSeek and Gemini traces beside short programs -------------------------

const dir = mkdtempSync(join(tmpdir(), "maitred-soak-"));
const logFile = a["log-file"] ?? join(dir, "router.log");

/**
 * Short agent programs (1–3 calls, a few hundred tokens of prompt, 8–32 tokens out, 0.2–3 s of
 * tool time in the modelled system): what a fleet's program count is mostly made of, and what
 * lets two simulated backends on two vCPUs serve tens of programs a second.
 */
function writeShortTrace(file: string, count: number): void {
  const rng = createRng(seed * 7919 + 1);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const steps = [];
    let prompt = rng.int(300, 800);
    const n = rng.int(1, 3);
    for (let s = 0; s < n; s++) {
      const out = rng.int(8, 32);
      steps.push({ prompt_tokens: prompt, completion_tokens: out, tool_ms: rng.int(200, 3000) });
      prompt += out + rng.int(50, 150);
    }
    lines.push(JSON.stringify({ id: `short-${i}`, steps }));
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
}
const shortTrace = join(dir, "soak-short.jsonl");
writeShortTrace(shortTrace, 500);
// A mix's weights are > 0: a share of 0 or 1 leaves its side out.
const mixParts = [
  ...(traceShare > 0 ? [`deepseek=${traceShare / 2}`, `gemini=${traceShare / 2}`] : []),
  ...(traceShare < 1 ? [`${shortTrace}=${1 - traceShare}`] : []),
];
const mix = `mix:${mixParts.join(",")}`;

// Before any process starts: a schedule that does not fit stops the soak with nothing to clean.
const schedule = faultSchedule({
  seed,
  durationMs,
  warmupMs,
  tailMs,
  backends: totalBackends,
  cells: numCells,
  perKind: num("faults-per-kind"),
  lengthMs: faultLengths(),
});

// ---- processes ------------------------------------------------------------------------------

interface Backend {
  settings: SimBackendSettings;
  proc: MaitredProcess;
  url: string;
}
const startBackend = async (settings: SimBackendSettings) => {
  const proc = await startMaitredProcess(
    ["sim-backend", ...simBackendArgs(settings), "--log-level", "info"],
    "sim-backend listening",
  );
  pin(proc.pid, cpus?.others);
  return proc;
};

const backends: Backend[] = [];
for (let i = 0; i < totalBackends; i++) {
  const settings = simBackendSettings({ timeScale, numGpuBlocks: num("num-gpu-blocks") }, i);
  const proc = await startBackend(settings);
  backends.push({
    settings: { ...settings, port: Number(new URL(proc.url).port) },
    proc,
    url: proc.url,
  });
}

/** Every line the routers log, in one file (`--log-file`). */
const logOut = createWriteStream(logFile);
/** Access log tallies, kept as lines come (a day's lines are not held in memory). */
const access = {
  byPath: new Map<string, number>(),
  failed: [] as AccessLine[],
  held: [] as AccessLine[],
};

const limits = { maxRequestMs: 60 * MS, maxPauseMs, slackMs: 2 * tickMs + sampleMs };

/** One router: the lone one, or a cell (its `serve` may be killed and started again). */
interface Router {
  name: string;
  backendUrls: string[];
  /** Its port, kept across restarts (HAProxy's configuration names it). */
  port: number;
  url: string;
  pid: number;
  proc: MaitredProcess;
  /** False from a kill until its restart is listening. */
  up: boolean;
  /** A restarted cell starts with no program: its checks start afresh with it. */
  checker: InvariantChecker;
  /** CPU seconds of its earlier, killed processes. */
  cpuBeforeS: number;
  restarts: number;
  /** Its last sample (for its RSS, live programs and programs left). */
  last: { rssMb: number | null; live: number };
}

/** `maitred serve` for router `name`; every line it logs goes to the log file and its checks. */
async function startRouter(
  name: string,
  backendUrls: readonly string[],
  port: number,
): Promise<{ url: string; pid: number; proc: MaitredProcess }> {
  const proc = await startServeProcess(
    [
      ...["--router", router, "--backends", backendUrls.join(",")],
      ...(numCells > 0 ? ["--cell", name] : []),
      ...["--access-log", "on"],
      ...[
        "--scheduler-interval",
        String(tickMs / MS),
        "--poll-timeout",
        String(pollTimeoutMs / MS),
      ],
      ...["--idle-timeout", String(idleTimeoutMs / MS), "--max-pause", String(maxPauseMs / MS)],
    ],
    {
      port,
      env:
        a["router-node-options"] === undefined
          ? process.env
          : { ...process.env, NODE_OPTIONS: a["router-node-options"] },
      onLine: (line) => {
        logOut.write(`${line}\n`);
        const l = parseAccessLine(line);
        if (l === null) return;
        access.byPath.set(l.path, (access.byPath.get(l.path) ?? 0) + 1);
        if (isFailure(l)) access.failed.push(l);
        if (l.heldMs !== null && l.heldMs > maxPauseMs) access.held.push(l);
      },
    },
  );
  pin(proc.pid, cpus?.router);
  return { url: proc.url, pid: proc.pid, proc };
}

const routers: Router[] = [];
for (let c = 0; c < Math.max(1, numCells); c++) {
  const name = numCells > 0 ? `cell-${String.fromCharCode(97 + c)}` : "router";
  const backendUrls = backends.slice(c * numBackends, (c + 1) * numBackends).map((b) => b.url);
  const p = await startRouter(name, backendUrls, 0);
  routers.push({
    name,
    backendUrls,
    port: Number(new URL(p.url).port),
    ...p,
    up: true,
    checker: createInvariantChecker(limits),
    cpuBeforeS: 0,
    restarts: 0,
    last: { rssMb: null, live: 0 },
  });
}
const cellNames = routers.map((rt) => rt.name);
let hap: HaproxyProcess | null = null;
if (numCells > 0) {
  hap = await startHaproxy({
    cells: routers.map((rt) => ({ name: rt.name, address: `127.0.0.1:${rt.port}` })),
    dir,
    logFile: join(dir, "haproxy.log"),
  });
  pin(hap.pid, cpus?.others);
  await hap.waitUp(cellNames, CELLS_UP_TIMEOUT_MS);
}
/** Where the load goes: HAProxy in front of the cells, or the lone router. */
const entryUrl = hap?.url ?? routers[0].url;

/** Every request the soak sends to the router, by path: the access log must have as many lines. */
const sent = new Map<string, number>();
const count = (path: string) => sent.set(path, (sent.get(path) ?? 0) + 1);
/** Requests the soak gave up on before any answer: the router may never have seen them. */
const gaveUp = new Map<string, number>();
const unanswered = (path: string) => gaveUp.set(path, (gaveUp.get(path) ?? 0) + 1);
/** When the soak's own requests failed, by path (a killed cell may take their log lines). */
const clientFailures: { path: string; atMs: number }[] = [];
function routerFetch(path: string, init?: RequestInit): Promise<Response> {
  count(path);
  return fetch(`${entryUrl}${path}`, init);
}
/** A request straight to one router (its own views); one it never answered is given up. */
async function routerGet(rt: Router, path: string): Promise<unknown> {
  count(path);
  try {
    return await (await fetch(`${rt.url}${path}`)).json();
  } catch (err) {
    unanswered(path);
    throw err;
  }
}
function counted(client: StepClient): StepClient {
  return {
    async send(req, signal) {
      count("/v1/chat/completions");
      try {
        const res = await client.send(req, signal);
        if (!res.ok) clientFailures.push({ path: "/v1/chat/completions", atMs: Date.now() });
        return res;
      } catch (err) {
        // Aborted when load stopped: it may have left before the router read it.
        unanswered("/v1/chat/completions");
        throw err;
      }
    },
    async release(id) {
      count("/programs/release");
      const answered = await client.release(id);
      // A release lost on the wire (a reset, the pool closing as load stops) may never have
      // reached the router's log: given up, as a chat request that failed before an answer.
      if (!answered) unanswered("/programs/release");
      return answered;
    },
    close: () => client.close(),
  };
}

// ---- sampling: invariants, memory, CPU ------------------------------------------------------

const samples: Sample[] = [];
const violations: Violation[] = [];
const t0 = Date.now();
const since = (ms: number) => `${((ms - t0) / MS).toFixed(1)} s`;
let lastPrograms: readonly ProgramSample[] = [];

function violate(vs: Violation[]): void {
  for (const v of vs) {
    violations.push(v);
    console.log(`VIOLATION at ${since(v.atMs)} ${v.invariant}: ${v.detail}`);
  }
}
/** A cell's violations say which cell. */
const onRouter = (rt: Router, vs: Violation[]) =>
  numCells > 0 ? vs.map((v) => ({ ...v, detail: `${rt.name}: ${v.detail}` })) : vs;

/** A process's RSS (MB) and CPU seconds so far; null for both once it is gone. */
function procStats(pid: number): { rssMb: number | null; cpuS: number | null } {
  try {
    return { rssMb: processRssBytes(pid) / (1024 * 1024), cpuS: processCpuSeconds(pid) };
  } catch {
    return { rssMb: null, cpuS: null };
  }
}

async function routerSample(rt: Router): Promise<RouterSample> {
  const programs = (await routerGet(rt, "/programs")) as Record<
    string,
    { status: string; state: string; in_flight: number; paused_since: number | null }
  >;
  const bs = (await routerGet(rt, "/backends")) as Record<string, { used_tokens: number }>;
  return {
    atMs: Date.now(),
    programs: Object.entries(programs).map(([key, p]) => ({
      key,
      status: p.status,
      state: p.state,
      inFlight: p.in_flight,
      pausedSince: p.paused_since,
    })),
    usedTokens: Object.fromEntries(Object.entries(bs).map(([u, b]) => [u, b.used_tokens])),
  };
}

/** Every router's sample, the cells that are down left out. */
async function routerSamples(): Promise<{ rt: Router; s: RouterSample }[]> {
  const up = routers.filter((rt) => rt.up);
  return Promise.all(up.map(async (rt) => ({ rt, s: await routerSample(rt) })));
}

/** Programs the probes and bursts started; the closed loop's are `loopPrograms()`. */
let programsSeen = 0;
/** The largest rounding residue seen in the books (soak-invariants.ts BOOK_DRIFT_TOKENS). */
let drift = 0;
const noteDrift = (s: RouterSample) => {
  const d = bookDrift(s);
  if (Math.abs(d) > Math.abs(drift)) drift = d;
};
let loopPrograms = () => 0;
const addOrNull = (xs: (number | null)[]) =>
  xs.some((x) => x === null) ? null : xs.reduce((t: number, x) => t + (x as number), 0);
async function takeSample(): Promise<void> {
  let got: { rt: Router; s: RouterSample }[];
  try {
    got = await routerSamples();
  } catch (err) {
    console.log(`sample failed at ${since(Date.now())}: ${(err as Error).message}`);
    return;
  }
  lastPrograms = got.flatMap((g) => g.s.programs);
  const heaps: (number | null)[] = [];
  const lags: number[] = [];
  const stats = got.map(({ rt, s }) => {
    violate(onRouter(rt, rt.checker.observe(s)));
    noteDrift(s);
    const p = procStats(rt.pid);
    rt.last = { rssMb: p.rssMb, live: s.programs.length };
    return { rssMb: p.rssMb, cpuS: p.cpuS === null ? null : p.cpuS + rt.cpuBeforeS };
  });
  for (const { rt } of got) {
    // A cell killed since its views were read has no metrics: its heap is unknown.
    const text = await fetch(`${rt.url}/metrics`)
      .then((res) => res.text())
      .catch(() => "");
    const fams = parsePrometheusText(text);
    const heap = sumOf(fams, "nodejs_heap_size_used_bytes");
    const lag = sumOf(fams, "nodejs_eventloop_lag_p99_seconds");
    heaps.push(heap === null ? null : heap / 2 ** 20);
    if (lag !== null) lags.push(lag * MS);
  }
  // A cell down counts what its killed processes used.
  const downCpu = routers.filter((rt) => !rt.up).reduce((t, rt) => t + rt.cpuBeforeS, 0);
  const cpu = addOrNull(stats.map((x) => x.cpuS));
  samples.push({
    t_s: (Date.now() - t0) / MS,
    rss_mb: addOrNull(stats.map((x) => x.rssMb)),
    cpu_s: cpu === null ? null : cpu + downCpu,
    heap_mb: addOrNull(heaps),
    lag_p99_ms: lags.length === 0 ? null : Math.max(...lags),
    live_programs: lastPrograms.length,
    programs_seen: programsSeen + loopPrograms(),
    requests: sent.get("/v1/chat/completions") ?? 0,
    cells: routers.map((rt) => ({
      name: rt.name,
      rss_mb: rt.up ? rt.last.rssMb : null,
      live_programs: rt.up ? rt.last.live : 0,
    })),
  });
}

// ---- faults ---------------------------------------------------------------------------------

/** Each kind's length: as long as it must be to mean anything, within its slot. */
function faultLengths(): Record<FaultKind, number> {
  const kinds = FAULT_KINDS.length + (numCells >= 2 ? CELL_FAULT_KINDS.length : 0);
  const slot = (durationMs - warmupMs - tailMs) / (kinds * num("faults-per-kind"));
  const fit = (ms: number) => Math.min(ms, Math.floor(slot * 0.7));
  // Stopped past the poll timeout, so the router sees a frozen backend, not a slow one.
  const stopMs = Math.max(3 * pollTimeoutMs, fit(15 * MS));
  return {
    kill: fit(5 * MS),
    stop: stopMs,
    "metrics-garbage": fit(20 * MS),
    "metrics-error": fit(20 * MS),
    "metrics-slow": fit(20 * MS),
    "disconnect-mid-stream": fit(5 * MS),
    "disconnect-before-head": fit(5 * MS),
    "disconnect-held": fit(10 * MS),
    burst: fit(10 * MS),
    // Down past HAProxy's two failed checks, so it leaves the ring before it comes back.
    "kill-cell": fit(10 * MS),
  };
}
interface FaultRun {
  fault: Fault;
  window: FaultWindow;
  /** How many times it was done (a held disconnect needs a paused program to hijack). */
  done: number;
  note: string;
}
const runs: FaultRun[] = [];
const never = new AbortController().signal;
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));
const burst: { client: StepClient | null } = { client: null };
let model = "";

/**
 * A probe's chat request, sent by fetch so it can be cut where the fault says; `content` is its
 * prompt (a short line unless a fault needs a large context).
 */
function probe(
  programId: string,
  stream: boolean,
  signal: AbortSignal,
  content = `soak probe ${programId}`,
): Promise<Response> {
  return routerFetch("/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model,
      program_id: programId,
      messages: [{ role: "user", content }],
      max_tokens: PROBE_TOKENS,
      ignore_eos: true,
      stream,
    }),
    signal,
  });
}

/** Send a stream and cut it once `until` says so; resolves with whether it was cut held. */
async function cutStream(
  programId: string,
  heldOnly: boolean,
  content?: string,
): Promise<"held" | "mid" | "none"> {
  const ctl = new AbortController();
  try {
    const res = await probe(programId, true, ctl.signal, content);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const read = () => Promise.race([reader.read(), sleep(HELD_AFTER_MS).then(() => null)]);
    const first = await read();
    const text = first?.value === undefined ? "" : new TextDecoder().decode(first.value);
    const held = first === null || !text.includes("data:");
    if (held && !heldOnly) {
      // Cut mid-stream: wait for its first token (after the hold, if it was held).
      const end = Date.now() + STREAM_WAIT_MS;
      for (let chunk = first; Date.now() < end; chunk = await read()) {
        if (chunk?.done) break;
        if (chunk?.value !== undefined && new TextDecoder().decode(chunk.value).includes("data:")) {
          ctl.abort();
          return "mid";
        }
      }
    }
    ctl.abort();
    if (heldOnly && !held) return "none";
    return held ? "held" : "mid";
  } catch {
    return "none";
  }
}

async function runFault(run: FaultRun, tag: string): Promise<void> {
  const f = run.fault;
  const b = f.backend === null ? null : backends[f.backend];
  switch (f.kind) {
    case "kill": {
      const bb = b as Backend;
      await bb.proc.kill();
      run.done++;
      await sleep(f.lengthMs);
      bb.proc = await startBackend(bb.settings);
      break;
    }
    case "stop": {
      const bb = b as Backend;
      process.kill(bb.proc.pid, "SIGSTOP");
      run.done++;
      await sleep(f.lengthMs);
      process.kill(bb.proc.pid, "SIGCONT");
      break;
    }
    case "metrics-garbage":
    case "metrics-error":
    case "metrics-slow": {
      const bb = b as Backend;
      const res = await fetch(`${bb.url}/sim/metrics-fault`, {
        method: "POST",
        body: JSON.stringify({
          mode: f.kind.slice("metrics-".length),
          seconds: f.lengthMs / MS,
          delay_seconds: (2 * pollTimeoutMs) / MS,
        }),
      });
      if (res.ok) run.done++;
      else run.note = `control answered ${res.status}`;
      await sleep(f.lengthMs);
      break;
    }
    case "disconnect-mid-stream": {
      const cut = await Promise.all(
        Array.from({ length: DISCONNECTS }, (_, i) => cutStream(`soak-${tag}-mid-${i}`, false)),
      );
      programsSeen += DISCONNECTS;
      run.done = cut.filter((c) => c === "mid").length;
      run.note = `${cut.filter((c) => c === "held").length} were held, cut there`;
      break;
    }
    case "disconnect-before-head": {
      await Promise.all(
        Array.from({ length: DISCONNECTS }, async (_, i) => {
          const ctl = new AbortController();
          const p = probe(`soak-${tag}-head-${i}`, false, ctl.signal);
          const got = await Promise.race([
            p.then(
              () => true,
              () => false,
            ),
            sleep(BEFORE_HEAD_MS).then(() => false),
          ]);
          ctl.abort();
          if (!got) {
            run.done++;
            unanswered("/v1/chat/completions");
          }
        }),
      );
      programsSeen += DISCONNECTS;
      break;
    }
    case "disconnect-held": {
      // Requests of a paused program are held: send one for a paused program and leave.
      const end = Date.now() + f.lengthMs;
      const tried = new Set<string>();
      while (run.done < DISCONNECTS && Date.now() < end) {
        const paused = lastPrograms.find(
          (p) => p.state === "paused" && p.inFlight === 0 && !tried.has(p.key),
        );
        if (paused === undefined) break;
        tried.add(paused.key);
        if ((await cutStream(paused.key, true)) === "held") run.done++;
      }
      let pressed = 0;
      if (run.done < DISCONNECTS && router === "tr") {
        // No paused program to hijack: make the fleet hold some. New programs whose contexts
        // are each 0.4 of a backend's KV: at most two fit on a backend, the rest are held (a
        // held stream has its head and comments, no data), and each is cut where it stands.
        const tokens = Math.floor(0.4 * num("num-gpu-blocks") * 16);
        pressed = PRESSURE_PER_BACKEND * totalBackends;
        // Distinct prompts: one shared prefix would let the engine hold them all at once.
        const cut = await Promise.all(
          Array.from({ length: pressed }, (_, i) =>
            cutStream(`soak-${tag}-held-${i}`, true, textOfTokens(tokens, seed * 1000 + i)),
          ),
        );
        programsSeen += pressed;
        run.done += cut.filter((c) => c === "held").length;
      }
      run.note = `${tried.size} paused programs tried${pressed > 0 ? `, ${pressed} large new programs sent` : ""}`;
      break;
    }
    case "kill-cell": {
      const rt = routers[f.cell as number];
      rt.cpuBeforeS += procStats(rt.pid).cpuS ?? 0;
      rt.up = false;
      await rt.proc.kill();
      run.done++;
      await sleep(f.lengthMs);
      Object.assign(rt, await startRouter(rt.name, rt.backendUrls, rt.port));
      rt.checker = createInvariantChecker(limits);
      rt.restarts++;
      rt.up = true;
      const back = Date.now();
      await (hap as HaproxyProcess).waitUp(cellNames, CELLS_UP_TIMEOUT_MS);
      run.note = `HAProxy saw it UP ${Date.now() - back} ms after its restart`;
      break;
    }
    case "burst": {
      burst.client ??= counted(createStepClient({ url: entryUrl, connections: burstSize }));
      const client = burst.client;
      await Promise.all(
        Array.from({ length: burstSize }, async (_, i) => {
          const id = `soak-${tag}-burst-${i}`;
          await client.send(
            {
              programId: id,
              model,
              messages: [{ role: "user", content: `burst ${i}` }],
              maxTokens: 8,
              stream: false,
            },
            never,
          );
          await client.release(id);
        }),
      );
      programsSeen += burstSize;
      run.done = 1;
      break;
    }
  }
}

// ---- the run --------------------------------------------------------------------------------

let exitCode = 0;
try {
  const served = await discoverModel(entryUrl);
  if (served === null) throw new Error(`no model served at ${entryUrl}`);
  model = served.id;
  const spec = { ...parseWorkloadArg(mix, { seed }), unreleased: num("unreleased") };
  const workload = await loadWorkload(
    served.maxModelLen ? limitContext(spec, served.maxModelLen) : spec,
  );
  console.log(
    `soak: ${a.minutes} min at time scale ${timeScale} (~${((durationMs * timeScale) / 3_600_000).toFixed(1)} simulated hours), router ${router}, ${numCells > 0 ? `${numCells} cells behind HAProxy, each with ` : ""}${numBackends} sim-backends (${a["num-gpu-blocks"]} blocks each), seed ${seed}`,
  );
  console.log(
    `mix: ${concurrency} slots: DeepSeek trace ${traceShare / 2}, Gemini trace ${traceShare / 2}, short programs ${1 - traceShare} (1–3 calls, 300–800 prompt tokens, 8–32 out); ${Math.round(num("stream-share") * 100)} % streamed; ${Math.round(num("unreleased") * 100)} % never released; bursts of ${burstSize}; no client retries`,
  );
  console.log(
    `router: --scheduler-interval ${tickMs / MS} --poll-timeout ${pollTimeoutMs / MS} --idle-timeout ${idleTimeoutMs / MS} --max-pause ${maxPauseMs / MS} (wall seconds); no config reload is injected: maitred has none (no SIGHUP)${cpus === null ? "" : `; router on CPU ${cpus.router}, the soak, backends and HAProxy on ${cpus.others}`}`,
  );
  console.log(
    `faults: ${schedule.length} (${[...FAULT_KINDS, ...(numCells >= 2 ? CELL_FAULT_KINDS : [])].map((k) => `${k} ×${schedule.filter((f) => f.kind === k).length}`).join(", ")}); log ${logFile}\n`,
  );

  const client = counted(createStepClient({ url: entryUrl, connections: concurrency * 2 }));
  const loop = startClosedLoop({
    workload,
    client,
    model,
    concurrency,
    timeScale,
    warmupMs: 0,
    durationMs,
    maxRetries: 0,
    streamShare: num("stream-share"),
    programIdPrefix: "soak-",
  });
  loopPrograms = () => {
    const p = loop.progress();
    return p.programsStarted;
  };
  const pending: Promise<void>[] = [];
  schedule.forEach((fault, i) => {
    const window: FaultWindow = {
      id: i,
      kind: fault.kind,
      startMs: t0 + fault.atMs,
      endMs: t0 + fault.atMs + fault.lengthMs,
      backend: fault.backend === null ? null : backends[fault.backend].url,
    };
    const run: FaultRun = { fault, window, done: 0, note: "" };
    runs.push(run);
    pending.push(
      sleep(fault.atMs).then(async () => {
        window.startMs = Date.now();
        console.log(
          `${since(Date.now())} fault ${fault.kind}${fault.backend === null ? "" : ` on backend ${fault.backend}`}${fault.cell === null ? "" : ` on ${cellNames[fault.cell]}`} for ${fault.lengthMs} ms`,
        );
        await runFault(run, `f${i}`).catch((err: Error) => {
          run.note = `failed: ${err.message}`;
        });
        window.endMs = Math.max(window.endMs, Date.now());
      }),
    );
  });
  const sampler = setInterval(() => {
    const p = loop.progress();
    void takeSample();
    if (samples.length % 12 === 0)
      console.log(
        `${since(Date.now())} programs ${p.programsStarted}, steps ${p.stepsCompleted}, errors ${p.errors}, live ${lastPrograms.length}, router RSS ${samples.at(-1)?.rss_mb?.toFixed(0) ?? "n/a"} MB`,
      );
  }, sampleMs);
  const records = await loop.done;
  await Promise.all(pending);
  await client.close();
  await burst.client?.close();
  const loadEnd = Date.now();
  console.log(
    `\n${since(loadEnd)} load stopped; waiting for the idle timeout (${idleTimeoutMs / MS} s) to empty /programs`,
  );
  // Programs left: released by their clients, or idle-timed-out; the tick that releases them.
  const left = (xs: { s: RouterSample }[]) => xs.reduce((t, x) => t + x.s.programs.length, 0);
  let last = await routerSamples();
  while (left(last) > 0 && Date.now() < loadEnd + idleTimeoutMs + 30 * MS) {
    await sleep(2 * MS);
    last = await routerSamples();
  }
  clearInterval(sampler);
  await takeSample();
  for (const { rt, s } of last) {
    noteDrift(s);
    violate(onRouter(rt, drainedViolations(s)));
  }

  // The access log: one line per request sent (wait for the last lines to be written).
  await sleep(2 * MS);
  const graceMs = 2 * tickMs + 3 * pollTimeoutMs;
  const cellKills = runs.filter((x) => x.fault.kind === "kill-cell").map((x) => x.window);
  const retried = hap === null ? 0 : await hap.retries();
  for (const [path, n] of sent) {
    // Only the paths sent through HAProxy are retried by it or lost with a cell.
    const viaHaproxy = hap !== null && path !== "/programs" && path !== "/backends";
    const c = {
      path,
      sent: n,
      gaveUp: gaveUp.get(path) ?? 0,
      lines: access.byPath.get(path) ?? 0,
      retried: viaHaproxy ? retried : 0,
      lostWithCell: clientFailures.filter(
        (f) => f.path === path && inAnyWindow(f.atMs, cellKills, graceMs),
      ).length,
    };
    const v = accessLogViolation(c, Date.now());
    if (v !== null) violate([v]);
    else console.log(`access log ${accessCountText(c)}`);
  }
  const attr = attributeFailures(
    access.failed,
    runs.map((x) => x.window),
    graceMs,
  );
  violate(
    attr.unexplained.slice(0, 20).map((l) => ({
      atMs: l.endMs,
      invariant: "unexplained-failure" as const,
      detail: `${l.path} ${l.status} ${l.error ?? ""} on ${l.backend ?? "no backend"} (${l.durationMs} ms)`,
    })),
  );
  if (attr.unexplained.length > 20)
    console.log(`… ${attr.unexplained.length - 20} more unexplained failures`);
  violate(heldTooLong(access.held, limits));

  // ---- the figures --------------------------------------------------------------------------
  const programs = records.programs.length + (records.subagents?.length ?? 0) + programsSeen;
  const requests = sent.get("/v1/chat/completions") ?? 0;
  // The baseline has every cell up (a cell down would take its memory out of the sum).
  const allUp = (s: Sample) => s.cells.every((c) => c.rss_mb !== null);
  const warm =
    samples.find((s) => s.t_s * MS >= baselineMs && s.rss_mb !== null && allUp(s)) ?? samples[0];
  const end = samples[samples.length - 1];
  const liveMax = Math.max(1, ...samples.map((s) => s.live_programs));
  const lags = samples.map((s) => s.lag_p99_ms).filter((v): v is number => v !== null);
  const cpuUs = end.cpu_s === null ? null : (end.cpu_s * 1e6) / Math.max(1, requests);
  const kill = runs.filter((x) => x.fault.kind === "kill").map((x) => x.window);
  const cut = records.errors.filter((e) => e.kind === "stream_error");
  const lost = records.errors.length - cut.length;
  const fmt = (v: number | null, d = 1) => (v === null ? "n/a" : v.toFixed(d));
  const measures: string[][] = [];
  const row = (k: string, v: string | number) => measures.push([k, String(v)]);
  row(
    "wall time / simulated time",
    `${((loadEnd - t0) / 60_000).toFixed(1)} min / ${(((loadEnd - t0) * timeScale) / 3_600_000).toFixed(1)} h`,
  );
  row("programs seen (closed loop + sub-agents + bursts + probes)", programs);
  row(
    "programs completed by the closed loop",
    records.programs.filter((p) => p.outcome === "completed").length,
  );
  row("programs per wall second", (programs / ((loadEnd - t0) / MS)).toFixed(1));
  row("steps answered", records.steps.length);
  row("requests sent (chat completions)", requests);
  row(
    "driver failures: lost (before any byte) / streams cut mid-answer",
    `${lost} / ${cut.length}`,
  );
  const during = (ws: readonly FaultWindow[]) =>
    records.errors.filter((e) => inAnyWindow(t0 + e.atMs, ws, graceMs)).length;
  row("  of which during a backend kill window", during(kill));
  if (cellKills.length > 0) row("  of which during a cell kill window", during(cellKills));
  row("router failures in the access log (5xx, error events)", access.failed.length);
  row(
    "  explained by a fault / unexplained",
    `${access.failed.length - attr.unexplained.length} / ${attr.unexplained.length}`,
  );
  row(
    `RSS after warm-up (${(warm.t_s).toFixed(0)} s) / at the end (MB)`,
    `${fmt(warm.rss_mb)} / ${fmt(end.rss_mb)}`,
  );
  row(
    "RSS end ÷ after warm-up",
    warm.rss_mb && end.rss_mb ? (end.rss_mb / warm.rss_mb).toFixed(2) : "n/a",
  );
  row(
    "RSS per live program at the peak (KB)",
    fmt((Math.max(...samples.map((s) => s.rss_mb ?? 0)) * 1024) / liveMax),
  );
  row(
    "RSS per program seen, at the end (KB)",
    fmt(((end.rss_mb ?? 0) * 1024) / Math.max(1, programs)),
  );
  row("peak live programs", liveMax);
  row("heap used at the end (MB)", fmt(end.heap_mb));
  const heaps = samples.map((s) => s.heap_mb).filter((v): v is number => v !== null);
  row(
    "heap used over the run, lowest / highest sample (MB)",
    heaps.length === 0 ? "n/a" : `${fmt(Math.min(...heaps))} / ${fmt(Math.max(...heaps))}`,
  );
  // Each sample is the p99 of the delays since the previous scrape (prom-client resets its
  // histogram on every collection): the median sample is the usual window, the worst the worst.
  // The monitor's own sampling interval is taken out: an idle router reads that much.
  const sortedLags = lags.map((x) => Math.max(0, x - EVENT_LOOP_SAMPLING_MS)).sort((x, y) => x - y);
  row(
    `event-loop delay p99 of a sample window, beyond the ${EVENT_LOOP_SAMPLING_MS} ms sampling interval: median / p90 / worst (ms)`,
    lags.length === 0
      ? "n/a"
      : [50, 90, 100].map((q) => percentile(sortedLags, q).toFixed(1)).join(" / "),
  );
  row(`router CPU per request (µs${numCells > 0 ? ", all cells" : ""})`, fmt(cpuUs, 0));
  if (hap !== null) {
    const hapCpu = procStats(hap.pid).cpuS;
    row(
      "HAProxy CPU per request (µs)",
      fmt(hapCpu === null ? null : (hapCpu * 1e6) / Math.max(1, requests), 0),
    );
    row("requests HAProxy retried on another cell", retried);
  }
  console.log(`\n${markdownTable(["measure", "value"], measures)}`);
  if (hap !== null) {
    const cellRows = routers.map((rt, c) => {
      const peak = Math.max(0, ...samples.map((s) => s.cells[c].live_programs));
      const leftOn = last.find((x) => x.rt === rt)?.s.programs.length ?? 0;
      const cpuS = (procStats(rt.pid).cpuS ?? 0) + rt.cpuBeforeS;
      return [
        rt.name,
        `${fmt(warm.cells[c].rss_mb)} / ${fmt(end.cells[c].rss_mb)}`,
        String(peak),
        String(leftOn),
        cpuS.toFixed(1),
        String(rt.restarts),
      ];
    });
    const cellHead = [
      "cell",
      "RSS after warm-up / at the end (MB)",
      "peak live programs",
      "programs left",
      "CPU (s)",
      "restarts",
    ];
    console.log(`\n${markdownTable(cellHead, cellRows)}`);
  }
  const faultRows = runs.map((x) => [
    x.fault.kind,
    String(x.fault.backend ?? (x.fault.cell === null ? "" : cellNames[x.fault.cell])),
    since(x.window.startMs),
    `${x.fault.lengthMs} ms`,
    String(x.done),
    String(attr.explained.get(x.window.id) ?? 0),
    x.note,
  ]);
  const faultHead = [
    "fault",
    "backend / cell",
    "at",
    "length",
    "done",
    "failures it explains",
    "note",
  ];
  console.log(`\n${markdownTable(faultHead, faultRows, ["fault", "note"])}`);
  const invariantRows = INVARIANTS.map((inv) => {
    const n = violations.filter((v) => v.invariant === inv).length;
    const note =
      inv === "books" && drift !== 0
        ? ` (rounding residue up to ${drift.toExponential(1)} tokens)`
        : "";
    return [inv, `${n === 0 ? "ok" : `**${n} violation(s)**`}${note}`];
  });
  console.log(`\n${markdownTable(["invariant", "result"], invariantRows, 2)}`);
  const kinds = new Map<string, number>();
  for (const e of records.errors) kinds.set(e.kind, (kinds.get(e.kind) ?? 0) + 1);
  if (kinds.size > 0)
    console.log(`\ndriver failures by kind: ${[...kinds].map(([k, n]) => `${k} ${n}`).join(", ")}`);

  if (a.json !== undefined)
    writeFileSync(
      a.json,
      `${JSON.stringify({ samples, faults: runs.map((x) => ({ ...x.fault, done: x.done, explains: attr.explained.get(x.window.id) ?? 0 })), violations }, null, 1)}\n`,
    );
  if (a.svg !== undefined) writeFileSync(a.svg, soakChart(samples, EVENT_LOOP_SAMPLING_MS));
  exitCode = violations.length === 0 ? 0 : 1;
} finally {
  await hap?.close();
  for (const rt of routers) await rt.proc.close();
  for (const b of backends) {
    try {
      process.kill(b.proc.pid, "SIGCONT");
    } catch {}
    await b.proc.close();
  }
  logOut.end();
}
process.exit(exitCode);
