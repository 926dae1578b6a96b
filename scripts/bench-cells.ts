/**
 * What cells behind HAProxy cost and keep: three cells, each a `maitred serve --router tr` with
 * two simulated backends (every one its own process, as users run them), behind HAProxy with
 * the configuration `maitred cells haproxy-config` writes, a closed-loop agent workload through
 * HAProxy's address, and one cell killed and restarted part-way. The driver does not retry
 * (OpenAI clients would, and hide what was lost), so every failure it sees is one the stack
 * passed on. On the wall clock, after the warmup:
 *   - `stable`: all three cells;
 *   - `dead`: cell-b's `serve` killed with SIGKILL (its backends stay up);
 *   - `back`: cell-b restarted on the same port in front of the same backends, empty.
 *
 * HAProxy gets one bench-only addition, a log line per request on its stdout (start, cell,
 * program id, status, timers, retries, termination state): it is what tells which cell served
 * each request. Prints, from what was measured:
 *   - program affinity: per program, the share of its answered requests that its most-used
 *     cell served, per phase, counting only requests that started and ended while no cell
 *     changed (after a change, from when HAProxy logged it), and how many programs moved;
 *   - requests lost per phase, by kind: an error status answered, a connection cut mid-answer,
 *     hung (still unanswered a drain period after the run ended), and which were in flight on
 *     the killed cell;
 *   - how long the killed cell's programs took to be answered elsewhere, against one
 *     health-check interval plus one step, and when HAProxy logged the cell DOWN;
 *   - steps/min per phase, the hash's balance (programs per cell), and CPU per phase: the
 *     machine's, and each part's (backends, cells, HAProxy, driver) from /proc, with HAProxy's
 *     CPU time per request;
 *   - the ratio against three lone routers: the same stack without HAProxy, fresh, each router
 *     driven directly with the programs the hash gives its cell, in the same order (same ids,
 *     traces, text seeds and streaming), as many at a time as that cell had in flight on
 *     average while stable. The hash's map for ids HAProxy never saw comes from a second
 *     HAProxy with the same configuration in front of three stub cells that answer with their
 *     name (the ring depends on the servers' order and weights, not their addresses; the run's
 *     log checks it);
 *   - the latency HAProxy adds: with the load stopped, small and ~200 KB non-streaming
 *     requests, one at a time, alternately straight to cell-a and through HAProxy (a program id
 *     the hash gives cell-a), p50/p90 both ways, and HAProxy's CPU per request.
 * Ends with each goal, its measured value and whether it was met.
 *
 *   node scripts/bench-cells.ts [--concurrency 24] [--warmup 30s] [--phase 60s]
 *       [--time-scale 2.5] [--num-gpu-blocks 4000] [--profile llama-3.1-8b-h100] [--seed 1]
 *       [--workload deepseek] [--stream-share 0.5] [--latency-requests 1000]
 *       [--large-requests 300] [--skip-lone] [--haproxy-log FILE] [--haproxy-no-trim]
 *       [--body-buffer 1MiB]
 *
 * `--phase` is the length of each of the three phases; `--latency-requests` the requests sent
 * each way with a small body, `--large-requests` with the ~200 KB body; `--skip-lone` leaves out
 * the lone-router pass (and so the ratio); `--haproxy-log` also appends HAProxy's log (and the
 * bench's marks, on HAProxy's clock) to FILE. The defaults keep a 2-CPU machine below
 * saturation (the six simulated backends take most of it) and a run near 6 minutes.
 * `--haproxy-no-trim` runs HAProxy with glibc's heap trimming off (GLIBC_TUNABLES): with 1 MiB
 * buffers and L7 retries, HAProxy takes and gives back megabytes of heap per request, and the
 * page faults of taking it again are most of its CPU time per request. `--body-buffer` is
 * `maitred cells haproxy-config --body-buffer`: HAProxy's buffer, the largest body whose program
 * id it reads (smaller is cheaper; a larger body keeps its cell only by a header identity).
 * Needs `haproxy` (2.6+).
 */
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import {
  affinity,
  answered,
  apportion,
  byProgram,
  type CpuSample,
  cpuShares,
  inWindow,
  logOf,
  meanInFlight,
  moves,
  type Span,
  sum,
  within,
} from "../src/bench/cells-analysis.ts";
import { abortableSleep, startClosedLoop, streamsAt } from "../src/bench/closed-loop.ts";
import { simBackendArgs, simBackendSettings } from "../src/bench/compare.ts";
import { discoverModel } from "../src/bench/discover-model.ts";
import {
  type HapEvent,
  type HapRequest,
  parseRequestLine,
  parseStateLine,
  withRequestLog,
} from "../src/bench/haproxy-log.ts";
import { haproxyInstalled, startHaproxy } from "../src/bench/haproxy-process.ts";
import {
  type MaitredProcess,
  startMaitredProcess,
  startServeProcess,
} from "../src/bench/maitred-process.ts";
import { median, percentileOf } from "../src/bench/percentile.ts";
import { machineJiffies, processCpuSeconds } from "../src/bench/process-stats.ts";
import type { RunRecords } from "../src/bench/records.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";
import {
  blocksFlag,
  concurrencyFlag,
  durationFlag,
  profileFlag,
  seedFlag,
  timeScaleFlag,
  warmupFlag,
  workloadFlag,
} from "../src/bench/script-flags.ts";
import { scaledTimeFlags, scaleRouterTimes } from "../src/bench/start-router-for.ts";
import { createStepClient } from "../src/bench/step-client.ts";
import { renderTable } from "../src/bench/table-cells.ts";
import { type Attempt, programIndex, subsequence, traceClient } from "../src/bench/trace-client.ts";
import {
  type Cell,
  CHECK_INTERVAL_MS,
  DEFAULT_BODY_BUFFER_BYTES,
  haproxyConfig,
} from "../src/cells/haproxy-config.ts";
import { IDENTITY_SOURCES } from "../src/config/identity-sources.ts";
import { resolveRouterConfig } from "../src/config/load-config.ts";
import { byteSize, integer, share } from "../src/config/values.ts";
import { DEFAULT_PROFILE } from "../src/engine/timing.ts";
import { wallClock } from "../src/runtime/clock.ts";
import { limitContext, loadWorkload, parseWorkloadArg } from "../src/workload/load-workload.ts";

const SPEC = {
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
const { values: a, parsed } = scriptArgs(SPEC);

const concurrency = parsed.concurrency;
const warmupMs = parsed.warmup;
const phaseMs = parsed.phase;
const timeScale = parsed["time-scale"];
const numGpuBlocks = parsed["num-gpu-blocks"];
const seed = parsed.seed;
const streamShare = parsed["stream-share"];
const latencyRequests = parsed["latency-requests"];
const largeRequests = parsed["large-requests"];
const bodyBufferBytes = parsed["body-buffer"];
const profile = a.profile;

const CELLS = ["cell-a", "cell-b", "cell-c"];
/** cell-b: the cell killed and restarted. */
const VICTIM = 1;
const VICTIM_NAME = CELLS[VICTIM];
const BACKENDS_PER_CELL = 2;
/**
 * Whether each `serve` is told its cell name (`--cell`): it only labels request ids, metrics,
 * logs and /health, so a `serve` that predates the flag can be run with this off.
 */
const PASS_CELL_FLAG = true;
/** Program ids of the closed loop: `cells-p<index>`, the same in both passes. */
const PROGRAM_PREFIX = "cells-";
/** The body of the large latency requests: an agent's context is hundreds of KB of JSON. */
const LARGE_BODY_BYTES = 200 * 1024;
/**
 * glibc keeps freed heap up to these sizes instead of giving it back (`--haproxy-no-trim`):
 * trim threshold and top pad 256 MiB, and 1 MiB buffers from the heap, not mmap.
 */
const NO_TRIM =
  "glibc.malloc.trim_threshold=268435456:glibc.malloc.top_pad=268435456:glibc.malloc.mmap_threshold=33554432";
/** How long HAProxy gets to see every cell UP. */
const READY_TIMEOUT_MS = 30_000;

// HAProxy first: nothing is started without it.
if (!haproxyInstalled()) {
  console.error("haproxy not found: apt-get install haproxy");
  process.exit(2);
}

// ─── what to stop at the end, on an error or on Ctrl-C ──────────────────────────────────────
const live = new Set<() => Promise<void>>();
/** Registers a closer; the returned function closes once and forgets it. */
function own(close: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | null = null;
  const once = () => {
    if (done === null) {
      live.delete(once);
      done = close().catch(() => {});
    }
    return done;
  };
  live.add(once);
  return once;
}
async function closeAll(): Promise<void> {
  await Promise.all([...live].map((c) => c()));
}
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => {
    console.error(`\n${sig}: stopping HAProxy, cells and backends`);
    void closeAll().then(() => process.exit(130));
  });
}

// ─── small helpers ──────────────────────────────────────────────────────────────────────────
const never = new AbortController().signal;
const sleep = (ms: number) => abortableSleep(wallClock, ms, never);
const sleepUntil = (at: number) => sleep(at - wallClock.now());
const log = (msg: string) => {
  console.error(`[bench-cells ${new Date().toISOString()}] ${msg}`);
  // The same marks in HAProxy's log file, on its clock, to read the two side by side.
  if (a["haproxy-log"] !== undefined) appendFileSync(a["haproxy-log"], `# ${Date.now()} ${msg}\n`);
};

const pct = percentileOf;
const f0 = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : "-");
const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : "-");
const f2 = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : "-");
const f3 = (v: number) => (Number.isFinite(v) ? v.toFixed(3) : "-");
const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
/** Whether a program streams, fixed by its workload index (the same in every pass). */
const streams = (programId: string) => streamsAt(programIndex(programId), streamShare);

// ─── processes: simulated backends, cells, HAProxy ──────────────────────────────────────────
interface Proc {
  url: string;
  pid: number;
  close(): Promise<void>;
  /** SIGKILL. */
  kill(): Promise<void>;
}

function owned(p: MaitredProcess): Proc {
  const close = own(() => p.close());
  return {
    url: p.url,
    pid: p.pid,
    close,
    kill: async () => {
      await p.kill();
      await close();
    },
  };
}

/** The `index`-th simulated backend, as `bench compare` starts its own. */
async function startBackend(index: number): Promise<Proc> {
  const settings = simBackendSettings({ timeScale, numGpuBlocks, profile }, index);
  return owned(
    await startMaitredProcess(
      ["sim-backend", ...simBackendArgs(settings), "--log-level", "info"],
      "sim-backend listening",
    ),
  );
}

const routerConfig = scaleRouterTimes(
  resolveRouterConfig({
    flags: { router: "tr", backends: "http://127.0.0.1:1", host: "127.0.0.1", port: "0" },
    env: process.env,
  }),
  timeScale,
);

/** `maitred serve --router tr` as `bench compare` runs it, on `port`, named `name`. */
async function startCell(name: string, backendUrls: readonly string[], port: number) {
  return owned(
    await startServeProcess(
      [
        "--router",
        "tr",
        "--backends",
        backendUrls.join(","),
        ...scaledTimeFlags(routerConfig),
        ...(PASS_CELL_FLAG ? ["--cell", name] : []),
      ],
      { port },
    ),
  );
}

interface Haproxy {
  url: string;
  pid: number;
  requests: HapRequest[];
  events: HapEvent[];
  waitAllUp(names: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

function benchConfig(cells: readonly Cell[], bind: string, statsBind: string): string {
  return withRequestLog(
    haproxyConfig({ cells, bind, statsBind, identityOrder: IDENTITY_SOURCES, bodyBufferBytes }),
  );
}

/**
 * HAProxy's time (the system clock) minus this process's clock, both ms since the epoch; what
 * is left between the two is measured (`clockSkew`) and taken out before the log is read.
 */
const HAP_CLOCK_OFFSET_MS = Date.now() - wallClock.now();

/**
 * HAProxy in front of `cells` (haproxy-process.ts) with the bench's log lines added; each line
 * it logs is parsed as it comes, and also appended to `logFile` when given.
 */
async function startBenchHaproxy(cells: readonly Cell[], logFile?: string): Promise<Haproxy> {
  const dir = mkdtempSync(join(tmpdir(), "bench-cells-"));
  const removeDir = own(async () => rmSync(dir, { recursive: true, force: true }));
  const requests: HapRequest[] = [];
  const events: HapEvent[] = [];
  const hap = await startHaproxy({
    cells,
    dir,
    config: (bind, statsBind) => benchConfig(cells, bind, statsBind),
    env: a["haproxy-no-trim"] ? { ...process.env, GLIBC_TUNABLES: NO_TRIM } : process.env,
    onLine: (line) => {
      const at = wallClock.now();
      if (logFile !== undefined) appendFileSync(logFile, `${line}\n`);
      if (line.startsWith("REQ ")) {
        const r = parseRequestLine(line, HAP_CLOCK_OFFSET_MS);
        if (r !== null) requests.push(r);
        return;
      }
      const change = parseStateLine(line);
      if (change !== null) events.push({ atMs: at, ...change });
    },
  });
  const stop = own(async () => {
    await hap.close();
    await removeDir();
  });
  return {
    url: hap.url,
    pid: hap.pid,
    requests,
    events,
    waitAllUp: (names) => hap.waitUp(names, READY_TIMEOUT_MS),
    close: stop,
  };
}

/**
 * Where HAProxy's log puts a request's start, minus when this process sent it (median of 20
 * health checks through its frontend). HAProxy stamps its log from the system clock as it read
 * it at its last wake-up, the driver reads a monotonic clock anchored at the epoch: the two
 * need not agree to the millisecond, and the log is matched to the driver's requests and to
 * the kill by time.
 */
async function clockSkew(hap: Haproxy, tag: string): Promise<number> {
  const pool = new Pool(hap.url, { connections: 1 });
  const sent = new Map<string, number>();
  try {
    for (let i = 0; i < 20; i++) {
      const path = `/health?bench-clock=${tag}-${i}`;
      sent.set(path, wallClock.now());
      const res = await pool.request({ method: "GET", path });
      await res.body.dump();
    }
  } finally {
    await pool.close();
  }
  await sleep(200); // HAProxy logs a request once it has ended
  const d = hap.requests
    .filter((r) => sent.has(r.path))
    .map((r) => r.startMs - (sent.get(r.path) as number));
  return d.length === 0 ? 0 : median(d);
}

// ─── the ring probe: HAProxy's program → cell map for any id ────────────────────────────────
/**
 * The cell HAProxy's hash gives each id: the same generated configuration in front of three
 * stub servers that answer every request with their name. HAProxy's consistent-hash ring
 * depends on the servers' order and weights, not on their addresses, so this is the real
 * stack's map; the run's own log checks it for every program it saw.
 */
async function probeRing(ids: readonly string[]): Promise<Map<string, string>> {
  const stubs: Server[] = [];
  const cells: Cell[] = [];
  for (const name of CELLS) {
    const s = createHttpServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.setHeader("content-type", "text/plain");
        res.end(name);
      });
    });
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    stubs.push(s);
    cells.push({ name, address: `127.0.0.1:${(s.address() as { port: number }).port}` });
  }
  const closeStubs = own(async () => {
    for (const s of stubs) s.closeAllConnections();
    await Promise.all(stubs.map((s) => new Promise((r) => s.close(r))));
  });
  const hap = await startBenchHaproxy(cells);
  const pool = new Pool(hap.url, { connections: 8 });
  const map = new Map<string, string>();
  try {
    await hap.waitAllUp(CELLS);
    let next = 0;
    const worker = async () => {
      while (next < ids.length) {
        const id = ids[next++];
        const res = await pool.request({
          method: "POST",
          path: "/v1/chat/completions",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ program_id: id }),
        });
        map.set(id, await res.body.text());
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
  } finally {
    await pool.close();
    await hap.close();
    await closeStubs();
  }
  return map;
}

// ─── latency: straight to a cell vs through HAProxy, one request at a time ──────────────────
async function timedPost(pool: Pool, body: string): Promise<{ ms: number; ok: boolean }> {
  const t = performance.now();
  const res = await pool.request({
    method: "POST",
    path: "/v1/chat/completions",
    headers: { "content-type": "application/json" },
    body,
  });
  await res.body.arrayBuffer();
  return { ms: performance.now() - t, ok: res.statusCode === 200 };
}

interface LatencyResult {
  direct: number[];
  haproxy: number[];
  failed: number;
  cpuMsPerRequest: number;
}

async function alternate(
  direct: Pool,
  via: Pool,
  body: string,
  n: number,
  hapPid: number,
): Promise<LatencyResult> {
  for (let i = 0; i < Math.min(20, n); i++) {
    await timedPost(direct, body);
    await timedPost(via, body);
  }
  const out: LatencyResult = { direct: [], haproxy: [], failed: 0, cpuMsPerRequest: Number.NaN };
  const cpu0 = processCpuSeconds(hapPid);
  for (let i = 0; i < n; i++) {
    // Alternate which goes first, so neither always follows the other's request.
    const order = i % 2 === 0 ? ([direct, via] as const) : ([via, direct] as const);
    for (const pool of order) {
      const r = await timedPost(pool, body);
      if (!r.ok) out.failed++;
      (pool === direct ? out.direct : out.haproxy).push(r.ms);
    }
  }
  out.cpuMsPerRequest = ((processCpuSeconds(hapPid) - cpu0) * 1000) / Math.max(1, n);
  return out;
}

// ─── analysis helpers ───────────────────────────────────────────────────────────────────────
interface Window extends Span {
  name: string;
}

const isChat = (r: HapRequest) =>
  r.method === "POST" &&
  r.path.startsWith("/v1/chat/completions") &&
  r.program?.startsWith(`${PROGRAM_PREFIX}p`) === true;

const stepsIn = (records: RunRecords, t0: number, w: Span) =>
  records.steps.filter((s) => inWindow(t0 + s.endMs, w));

/** CPU seconds of a process; 0 once it is gone. */
function cpuOf(pid: number): number {
  try {
    return processCpuSeconds(pid);
  } catch {
    return 0;
  }
}

function driverCpu(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

function takeSample(backendPids: readonly number[], cells: number, hapPid: number | null) {
  const m = machineJiffies();
  return {
    backends: sum(backendPids.map(cpuOf)),
    cells,
    haproxy: hapPid === null ? 0 : cpuOf(hapPid),
    driver: driverCpu(),
    busy: m.busy,
    total: m.total,
  } satisfies CpuSample;
}

// ─── the run ────────────────────────────────────────────────────────────────────────────────
interface Goal {
  name: string;
  measured: string;
  met: boolean | null;
}
const print = (s = "") => console.log(s);
const cpuCount = availableParallelism();

async function main(): Promise<void> {
  const spec = parseWorkloadArg(a.workload, { seed });

  // 1. Three cells, two backends each, every one its own process.
  log("starting 6 simulated backends and 3 cells");
  const backends: Proc[] = [];
  const backendUrls: string[][] = [];
  for (let c = 0; c < CELLS.length; c++) {
    const urls: string[] = [];
    for (let j = 0; j < BACKENDS_PER_CELL; j++) {
      const b = await startBackend(c * BACKENDS_PER_CELL + j);
      backends.push(b);
      urls.push(b.url);
    }
    backendUrls.push(urls);
  }
  const cells: Proc[] = [];
  for (let c = 0; c < CELLS.length; c++) cells.push(await startCell(CELLS[c], backendUrls[c], 0));
  const cellPort = cells.map((p) => Number(new URL(p.url).port));
  const target = await discoverModel(cells[0].url);
  if (target === null) throw new Error(`no model served at ${cells[0].url}`);
  const workload = await loadWorkload(
    target.maxModelLen ? limitContext(spec, target.maxModelLen) : spec,
  );

  // 2. HAProxy in front of them, once its checks have passed on all three.
  const hap = await startBenchHaproxy(
    CELLS.map((name, c) => ({ name, address: `127.0.0.1:${cellPort[c]}` })),
    a["haproxy-log"],
  );
  await hap.waitAllUp(CELLS);
  const skewBefore = await clockSkew(hap, "before");
  log(`HAProxy ${hap.url} sees ${CELLS.join(", ")} UP; load starts`);

  // 3–4. The closed loop through HAProxy; cell-b killed after `stable`, restarted after `dead`.
  // A request still unanswered this long after the run ended is hung: maitred seats every
  // held request within --max-pause.
  const drainMs = routerConfig.maxPauseMs + 30_000;
  const traced = traceClient(
    createStepClient({ url: hap.url, connections: concurrency }),
    drainMs,
    streams,
  );
  let deadCellsCpu = 0;
  const samples: CpuSample[] = [];
  const sample = () => {
    const cellsCpu = deadCellsCpu + sum(cells.map((c) => cpuOf(c.pid)));
    samples.push(
      takeSample(
        backends.map((b) => b.pid),
        cellsCpu,
        hap.pid,
      ),
    );
  };
  const t0 = wallClock.now();
  sample();
  const loop = startClosedLoop({
    workload,
    client: traced.client,
    model: target.id,
    concurrency,
    timeScale,
    warmupMs,
    durationMs: 3 * phaseMs,
    maxRetries: 0,
    // Whether a program streams is traceClient's choice, by its index.
    streamShare: 1,
    programIdPrefix: PROGRAM_PREFIX,
  });
  const stableAt = t0 + warmupMs;
  await sleepUntil(stableAt);
  sample();
  log("stable phase");
  await sleepUntil(stableAt + phaseMs);
  sample();
  deadCellsCpu += cpuOf(cells[VICTIM].pid);
  const killAt = wallClock.now();
  await cells[VICTIM].kill();
  log(`${VICTIM_NAME} killed (SIGKILL); dead phase`);
  await sleepUntil(stableAt + 2 * phaseMs);
  sample();
  const restartAt = wallClock.now();
  cells[VICTIM] = await startCell(VICTIM_NAME, backendUrls[VICTIM], cellPort[VICTIM]);
  const readyAt = wallClock.now();
  log(`${VICTIM_NAME} restarted, ready after ${f0(readyAt - restartAt)} ms; back phase`);
  await sleepUntil(stableAt + 3 * phaseMs);
  sample();
  const records = await loop.done;
  const endAt = t0 + records.endMs;
  await traced.client.close();
  log("load stopped");

  // 5. The latency HAProxy adds, with the load stopped, on a program id the hash gives cell-a.
  await hap.waitAllUp(CELLS);
  const direct = new Pool(cells[0].url, { connections: 1 });
  const via = new Pool(hap.url, { connections: 1 });
  const bodyOf = (id: string, content: string) =>
    JSON.stringify({
      model: target.id,
      messages: [{ role: "user", content }],
      max_tokens: 1,
      stream: false,
      program_id: id,
    });
  let latencyId: string | null = null;
  for (let i = 0; latencyId === null && i < 50; i++) {
    const id = `latency-${i}`;
    await timedPost(via, bodyOf(id, "hi"));
    const deadline = wallClock.now() + 2000;
    let entry: HapRequest | undefined;
    while (entry === undefined && wallClock.now() < deadline) {
      entry = hap.requests.find((r) => r.program === id);
      if (entry === undefined) await sleep(5);
    }
    if (entry?.server === CELLS[0]) latencyId = id;
  }
  if (latencyId === null) throw new Error(`no latency-N program id hashed to ${CELLS[0]}`);
  const smallBody = bodyOf(latencyId, "Say one word.");
  const largeBody = bodyOf(latencyId, " word".repeat(Math.ceil(LARGE_BODY_BYTES / 5)));
  log(`latency: ${latencyRequests} small and ${largeRequests} large requests each way`);
  const latSmall = { from: wallClock.now(), to: 0 };
  const small = await alternate(direct, via, smallBody, latencyRequests, hap.pid);
  latSmall.to = wallClock.now();
  const latLarge = { from: wallClock.now(), to: 0 };
  const large = await alternate(direct, via, largeBody, largeRequests, hap.pid);
  latLarge.to = wallClock.now();
  await direct.close();
  await via.close();
  await sleep(200); // HAProxy logs a request once it has ended
  const skewAfter = await clockSkew(hap, "after");
  // HAProxy's log on this process's clock.
  const hapRequests = hap.requests.map((r) => ({
    ...r,
    startMs: r.startMs - skewBefore,
    sentMs: r.sentMs - skewBefore,
    endMs: r.endMs - skewBefore,
  }));
  const hapEvents = [...hap.events];
  await closeAll();
  log("HAProxy, cells and backends stopped");

  // The hash's map for every program id the run launched (and as many again for the lone pass).
  const maxIndex = Math.max(...records.programs.map((p) => programIndex(p.programId)));
  const probeCount = 2 * (maxIndex + 1) + 100;
  log(`probing HAProxy's ring for ${probeCount} program ids`);
  const ids = Array.from({ length: probeCount }, (_, i) => `${PROGRAM_PREFIX}p${i}`);
  const ring = await probeRing(ids);
  const ringOf = (id: string) => ring.get(id);

  // ── figures of the HAProxy run ──
  const chat = hapRequests.filter(isChat);
  const index = byProgram(chat);
  const downEv = hapEvents.find(
    (e) => e.server === VICTIM_NAME && e.state === "DOWN" && e.atMs >= killAt,
  );
  const upEv = hapEvents.find(
    (e) => e.server === VICTIM_NAME && e.state === "UP" && e.atMs >= restartAt,
  );
  // Without a logged change, the longest HAProxy takes: `fall`/`rise` 2 checks, plus one.
  const downAt = downEv?.atMs ?? killAt + 3 * CHECK_INTERVAL_MS;
  const upAt = upEv?.atMs ?? readyAt + 3 * CHECK_INTERVAL_MS;
  const phases: Window[] = [
    { name: "warmup", from: t0, to: stableAt },
    { name: "stable", from: stableAt, to: killAt },
    { name: "dead", from: killAt, to: restartAt },
    { name: "back", from: restartAt, to: endAt },
  ];
  // While no cell changes: each change's transition left out (until HAProxy logged it).
  const calm = {
    stable: { from: stableAt, to: killAt },
    dead: { from: downAt, to: restartAt },
    back: { from: upAt, to: endAt },
  };

  print(
    `3 cells, each maitred serve --router tr + ${BACKENDS_PER_CELL} simulated backends (${profile}, time scale ${timeScale}, ${numGpuBlocks} GPU blocks), behind HAProxy ` +
      `(maitred cells haproxy-config, plus a log line per request); ${concurrency} programs of ${workload.name} (seed ${seed}), ` +
      `${Math.round(streamShare * 100)} % streamed, closed loop, no client retries. Warmup ${sec(warmupMs)}, then stable, dead, back ${sec(phaseMs)} each: ` +
      `${VICTIM_NAME}'s serve killed (SIGKILL, its backends kept) at the end of stable, restarted on its port at the end of dead. ${cpuCount} CPUs.` +
      ` HAProxy's buffer (--body-buffer) ${bodyBufferBytes} bytes.` +
      (a["haproxy-no-trim"]
        ? " HAProxy runs with glibc's heap trimming off (--haproxy-no-trim)."
        : ""),
  );
  print(
    `HAProxy logged ${VICTIM_NAME} DOWN ${downEv ? `${f0(downAt - killAt)} ms after the kill` : "never (3 checks assumed)"}; ` +
      `the restarted ${VICTIM_NAME} was ready ${f0(readyAt - restartAt)} ms after the restart began, logged UP ${upEv ? `${f0(upAt - restartAt)} ms after it` : "never (3 checks assumed)"}. ` +
      `Health checks every ${CHECK_INTERVAL_MS} ms, fall 2, rise 2. ` +
      `HAProxy's log clock ran ${f1(skewBefore)} ms ahead of the driver's before the load, ${f1(skewAfter)} ms after it (the log is read shifted by the first).`,
  );
  let agree = 0;
  let seen = 0;
  for (const [p, reqs] of index) {
    const r = reqs.find((x) => answered(x) && within(x, { from: t0, to: killAt }));
    if (r === undefined) continue;
    seen++;
    if (ringOf(p) === r.server) agree++;
  }
  const launched = CELLS.map((c) => records.programs.filter((p) => ringOf(p.programId) === c));
  print(
    `programs per cell (the hash's balance): ${CELLS.map((c, i) => `${c} ${launched[i].length}`).join(", ")} of ${records.programs.length} launched; ` +
      `of ${probeCount} ids: ${CELLS.map((c) => `${c} ${f1((100 * ids.filter((i) => ringOf(i) === c).length) / probeCount)} %`).join(", ")}. ` +
      `(The map is read from a second HAProxy with the same configuration in front of stub cells; it agrees with the run's log on ${agree} of ${seen} programs answered before the kill.)`,
  );

  // Steps and losses per phase.
  const stepsPerMin = (w: Span) => (stepsIn(records, t0, w).length * 60_000) / (w.to - w.from);
  const failed = traced.attempts.filter((x) => x.outcome === "failed" || x.outcome === "hung");
  const isStatus = (x: Attempt) => x.outcome === "failed" && (x.kind ?? "").startsWith("http_");
  const isCut = (x: Attempt) => x.outcome === "failed" && !(x.kind ?? "").startsWith("http_");
  const phaseOf = (x: Attempt) => {
    // A failure counts where it was seen, a hung request where it was sent.
    const t = x.outcome === "hung" ? x.startMs : (x.endMs as number);
    return phases.find((w) => inWindow(t, w))?.name ?? "after the end";
  };
  const phaseNames = [...phases.map((w) => w.name), "after the end"];
  print("");
  print(
    "per phase (the driver's requests and steps; a loss where it was seen, a hung request where it was sent; HAProxy's retries from its log, where the request was sent)",
  );
  print(
    renderTable(
      [
        "phase",
        "length",
        "requests sent",
        "steps answered",
        "steps/min",
        "lost: error status",
        "lost: cut mid-stream",
        "hung",
        "HAProxy retries",
      ],
      phaseNames.map((name) => {
        const w = phases.find((x) => x.name === name);
        const lost = failed.filter((x) => phaseOf(x) === name);
        const retried = chat.filter(
          (r) => r.retries > 0 && (w ? inWindow(r.startMs, w) : r.startMs >= endAt),
        );
        return [
          name,
          w ? sec(w.to - w.from) : "drain",
          String(traced.attempts.filter((x) => (w ? inWindow(x.startMs, w) : false)).length),
          w ? String(stepsIn(records, t0, w).length) : "-",
          w ? f1(stepsPerMin(w)) : "-",
          String(lost.filter(isStatus).length),
          String(lost.filter(isCut).length),
          String(lost.filter((x) => x.outcome === "hung").length),
          String(retried.length),
        ];
      }),
    ),
  );
  const drained = traced.attempts.filter((x) => x.afterStop);
  print(
    `requests in flight when the run ended: ${drained.length + traced.attempts.filter((x) => x.outcome === "hung").length}; ` +
      `${drained.filter((x) => x.outcome === "ok").length} answered, ${drained.filter((x) => x.outcome === "failed").length} failed within the ${sec(drainMs)} drain, ` +
      `${traced.attempts.filter((x) => x.outcome === "hung").length} hung; ${traced.attempts.filter((x) => x.outcome === "pending").length} never settled`,
  );
  const kinds = new Map<string, number>();
  for (const x of failed) {
    const r = logOf(x, index);
    const k = `${x.outcome === "hung" ? "hung" : x.kind} (${x.stream ? "stream" : "plain"}${x.firstTokenMs === null ? "" : ", after its first token"}; HAProxy: ${r === null ? "no log line" : `${r.server} ${r.status} ${r.term}`})`;
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  for (const [k, n] of kinds) print(`  failed: ${n} × ${k}`);
  // A request the driver sent before the kill, served by cell-b, that failed: in flight there.
  const inFlightAtKill = (x: Attempt) =>
    x.startMs < killAt && (x.endMs ?? endAt) >= killAt && logOf(x, index)?.server === VICTIM_NAME;
  const lostAtKill = failed.filter(inFlightAtKill);
  const lostElse = failed.filter((x) => !inFlightAtKill(x));
  const wereInFlight = traced.attempts.filter(
    (x) => x.startMs < killAt && (x.endMs ?? endAt) >= killAt,
  );
  const onVictim = wereInFlight.filter((x) => ringOf(x.programId) === VICTIM_NAME);
  const savedByRetry = onVictim.filter((x) => {
    const r = logOf(x, index);
    return x.outcome === "ok" && r !== null && r.server !== VICTIM_NAME && r.retries > 0;
  });
  print(
    `at the kill ${wereInFlight.length} requests were in flight, ${onVictim.length} of them on ${VICTIM_NAME} ` +
      `(${onVictim.filter((x) => x.stream).length} streamed): ${lostAtKill.length} failed, ${savedByRetry.length} answered by another cell after HAProxy retried them there ` +
      `(${savedByRetry.filter((x) => x.stream).length} streamed). Failures of any other request: ${lostElse.length}.`,
  );

  // CPU per phase.
  print("");
  print(
    `CPU per phase (% of one CPU, from /proc/<pid>/stat; the machine's busy share of all ${cpuCount} CPUs from /proc/stat; other: the rest of the machine)`,
  );
  print(
    renderTable(
      [
        "phase",
        "machine busy %",
        "6 backends",
        "3 cells",
        "HAProxy",
        "driver",
        "other",
        "HAProxy requests",
        "HAProxy CPU ms/request",
      ],
      phases.map((w, k) => {
        const s0 = samples[k];
        const s1 = samples[k + 1];
        const c = cpuShares(s0, s1, w.to - w.from, cpuCount);
        const n = hapRequests.filter((r) => inWindow(r.startMs, w)).length;
        return [
          w.name,
          f0(c.machine),
          f1(c.backends),
          f1(c.cells),
          f1(c.haproxy),
          f1(c.driver),
          f1(c.other),
          String(n),
          f3(((s1.haproxy - s0.haproxy) * 1000) / Math.max(1, n)),
        ];
      }),
    ),
  );

  // Affinity and moves.
  const aff = {
    stable: affinity(chat, calm.stable),
    dead: affinity(chat, calm.dead),
    back: affinity(chat, calm.back),
  };
  const atKill = moves(chat, { from: t0, to: killAt }, calm.dead);
  const atBack = moves(chat, calm.dead, calm.back);
  print("");
  print(
    "program affinity (HAProxy's log: requests answered in full that started and ended inside the window)",
  );
  print(
    renderTable(
      ["phase", "window", "programs", "mean share on its most-used cell", "programs < 100 %"],
      (["stable", "dead", "back"] as const).map((p) => [
        p,
        p === "stable"
          ? "whole phase"
          : p === "dead"
            ? `from ${VICTIM_NAME} DOWN (kill + ${f0(downAt - killAt)} ms)`
            : `from ${VICTIM_NAME} UP (restart + ${f0(upAt - restartAt)} ms)`,
        String(aff[p].programs),
        `${f2(100 * aff[p].meanShare)} %`,
        String(aff[p].below),
      ]),
    ),
  );
  const fromVictim = atKill.moved.filter((m) => ringOf(m.program) === VICTIM_NAME).length;
  const backHome = atBack.moved.filter((m) => m.to === VICTIM_NAME).length;
  print(
    `moved at the kill: ${atKill.moved.length} of the ${atKill.both} programs answered before the kill and after DOWN ` +
      `(${fromVictim} of ${VICTIM_NAME}'s, ${atKill.moved.length - fromVictim} of other cells'); ` +
      `moved at the restart: ${atBack.moved.length} of ${atBack.both} answered before the restart and after UP ` +
      `(${backHome} back to ${VICTIM_NAME}, ${atBack.moved.length - backHome} elsewhere)`,
  );

  // Time until the dead cell's programs ran elsewhere.
  const stepMs = median(stepsIn(records, t0, calm.stable).map((s) => s.endMs - s.startMs));
  const bound = CHECK_INTERVAL_MS + stepMs;
  const attemptsOf = new Map<string, Attempt[]>();
  for (const x of traced.attempts) {
    const l = attemptsOf.get(x.programId) ?? [];
    attemptsOf.set(x.programId, l);
    l.push(x);
  }
  const toSent: number[] = [];
  const toAnswer: number[] = [];
  const fromAttempt: number[] = [];
  const heldThere: number[] = [];
  const fate = { elsewhere: 0, lost: 0, quiet: 0, other: 0 };
  let victims = 0;
  for (const [program, atts] of attemptsOf) {
    // cell-b's programs that had run there before the kill.
    if (ringOf(program) !== VICTIM_NAME || !atts.some((x) => x.startMs < killAt)) continue;
    // Its requests from the kill to the restart; one cell-b answered in full had ended before
    // the kill, though the driver saw its end a moment after.
    const after = atts.filter((x) => {
      const r = logOf(x, index);
      const doneBefore = r !== null && r.server === VICTIM_NAME && answered(r);
      return (x.endMs ?? endAt) >= killAt && x.startMs < restartAt && !doneBefore;
    });
    victims++;
    if (after.length === 0) {
      fate.quiet++;
      continue;
    }
    const success = after.find((x) => {
      const r = logOf(x, index);
      return x.outcome === "ok" && r !== null && r.server !== VICTIM_NAME;
    });
    if (success === undefined) {
      if (after.some((x) => x.outcome === "failed" || x.outcome === "hung")) fate.lost++;
      else fate.other++;
      continue;
    }
    fate.elsewhere++;
    const r = logOf(success, index) as HapRequest;
    toSent.push(Math.max(0, r.sentMs - killAt));
    toAnswer.push((success.endMs as number) - killAt);
    fromAttempt.push((success.endMs as number) - Math.max(killAt, after[0].startMs));
    heldThere.push(success.pausedMs ?? 0);
  }
  print("");
  print(
    `${VICTIM_NAME}'s programs at the kill (the hash's, sent there before it): ${victims}; ${fate.elsewhere} then answered on another cell (sent before the restart), ` +
      `${fate.lost} lost their request in flight (a failed request ends its program), ${fate.quiet} sent nothing more before the restart, ${fate.other} other`,
  );
  const row = (label: string, xs: number[]) => [
    label,
    String(xs.length),
    f0(median(xs)),
    f0(xs.length === 0 ? Number.NaN : Math.max(...xs)),
  ];
  print(
    renderTable(
      ["until that program's first step on another cell", "programs", "p50 ms", "max ms"],
      [
        row("kill → HAProxy sent it to another cell", toSent),
        row("kill → answered there", toAnswer),
        row("its first request after the kill (or the kill) → answered there", fromAttempt),
        row("  of which the new cell's router held it (x-maitred-paused-ms)", heldThere),
      ],
    ),
  );
  print(
    `compare: one health-check interval ${CHECK_INTERVAL_MS} ms + one step (median in stable ${f0(stepMs)} ms) = ${f0(bound)} ms; ` +
      `HAProxy logged ${VICTIM_NAME} DOWN ${f0(downAt - killAt)} ms after the kill. The step on the new cell starts cold: no KV cache of the program there.`,
  );

  // Latency.
  const latRows = (label: string, r: LatencyResult) => [
    [
      `${label}, direct to ${CELLS[0]}`,
      String(r.direct.length),
      f2(pct(r.direct, 50)),
      f2(pct(r.direct, 90)),
      "",
      "",
    ],
    [
      `${label}, through HAProxy`,
      String(r.haproxy.length),
      f2(pct(r.haproxy, 50)),
      f2(pct(r.haproxy, 90)),
      f3(pct(r.haproxy, 50) - pct(r.direct, 50)),
      f3(r.cpuMsPerRequest),
    ],
  ];
  print("");
  print(
    `latency HAProxy adds, load stopped: non-streaming chat completions (max_tokens 1, program ${latencyId}, which the hash gives ${CELLS[0]}), one at a time, alternately direct and through HAProxy`,
  );
  print(
    renderTable(
      ["request", "n", "p50 ms", "p90 ms", "p50 added ms", "HAProxy CPU ms/request"],
      [
        ...latRows(`small (${smallBody.length} B)`, small),
        ...latRows(`large (${(largeBody.length / 1024).toFixed(0)} KiB)`, large),
      ],
    ),
  );
  if (small.failed + large.failed > 0) {
    print(`latency requests answered with another status than 200: ${small.failed + large.failed}`);
  }
  const timers = (w: Span) => {
    const rs = hapRequests.filter((r) => r.program === latencyId && inWindow(r.startMs, w));
    const p = (f: (r: HapRequest) => number) => f0(median(rs.map(f)));
    return `TR ${p((r) => r.tR)} / Tw ${p((r) => r.tw)} / Tc ${p((r) => r.tc)} / Tr ${p((r) => r.tr)} / Ta ${p((r) => r.ta)}`;
  };
  print(
    `HAProxy's own timers, p50 ms (1 ms resolution): small ${timers(latSmall)}; large ${timers(latLarge)}`,
  );
  const loadReqs = hapRequests.filter((r) => inWindow(r.startMs, { from: t0, to: endAt })).length;
  const loadCpu = samples[samples.length - 1].haproxy - samples[0].haproxy;
  print(
    `HAProxy CPU under load: ${f2(loadCpu)} s for ${loadReqs} requests (program releases included) = ${f3((loadCpu * 1000) / Math.max(1, loadReqs))} ms per request`,
  );

  // 6. Three lone routers, each with the programs the hash gave its cell.
  const stableStepsPerMin = stepsPerMin(calm.stable);
  let loneStepsPerMin: number | null = null;
  print("");
  if (a["skip-lone"]) print("lone-router pass skipped (--skip-lone)");
  else if (workload.mix !== undefined) {
    print("lone-router pass skipped: a mixed workload gives its programs to slots, not by index");
  } else {
    const shares = meanInFlight(CELLS, records.programs, endAt, t0, ringOf, calm.stable);
    const loneConc = apportion(shares, concurrency);
    log(`lone pass: ${sec(warmupMs)} warmup + ${sec(phaseMs)}`);
    const loneBackends: Proc[][] = [];
    for (let c = 0; c < CELLS.length; c++) {
      const bs: Proc[] = [];
      for (let j = 0; j < BACKENDS_PER_CELL; j++) {
        bs.push(await startBackend(c * BACKENDS_PER_CELL + j));
      }
      loneBackends.push(bs);
    }
    const loneRouters: Proc[] = [];
    for (let c = 0; c < CELLS.length; c++) {
      const urls = loneBackends[c].map((b) => b.url);
      loneRouters.push(await startCell(CELLS[c], urls, 0));
    }
    const lt0 = wallClock.now();
    const lone = CELLS.map((cell, c) => {
      const indices = ids.filter((i) => ringOf(i) === cell).map(programIndex);
      const t = traceClient(
        createStepClient({ url: loneRouters[c].url, connections: loneConc[c] }),
        0,
        streams,
      );
      const loop = startClosedLoop({
        workload: subsequence(workload, indices, cell),
        client: t.client,
        model: target.id,
        concurrency: loneConc[c],
        timeScale,
        warmupMs,
        durationMs: phaseMs,
        maxRetries: 0,
        streamShare: 1,
        programIdPrefix: PROGRAM_PREFIX,
      });
      return { t, loop };
    });
    await sleepUntil(lt0 + warmupMs);
    const loneSample = () =>
      takeSample(
        loneBackends.flat().map((b) => b.pid),
        sum(loneRouters.map((r) => cpuOf(r.pid))),
        null,
      );
    const c0 = loneSample();
    await sleepUntil(lt0 + warmupMs + phaseMs);
    const loneCpu = cpuShares(c0, loneSample(), phaseMs, cpuCount);
    const loneRecords = await Promise.all(lone.map((l) => l.loop.done));
    await Promise.all(lone.map((l) => l.t.client.close()));
    await closeAll();
    const lw = { from: lt0 + warmupMs, to: lt0 + warmupMs + phaseMs };
    const perLone = loneRecords.map((r) => (stepsIn(r, lt0, lw).length * 60_000) / phaseMs);
    loneStepsPerMin = sum(perLone);
    // Requests cut when the window closed are not failures (the closed loop ends that way).
    const lostLone = sum(
      lone.map((l) => l.t.attempts.filter((x) => x.outcome === "failed").length),
    );
    print(
      `three lone routers (no HAProxy), fresh, each with 2 fresh backends and driven directly with the programs the hash gives its cell, in the same order ` +
        `(same ids, traces, text seeds and streaming), as many at a time as the cell had in flight on average while stable ` +
        `(${CELLS.map((c, i) => `${c} ${f1(shares[i])}`).join(", ")} → ${loneConc.join(" + ")} = ${concurrency}); ${sec(warmupMs)} warmup, then ${sec(phaseMs)} measured`,
    );
    const hapStable = stepsIn(records, t0, calm.stable);
    print(
      renderTable(
        [
          "cell",
          "programs at a time",
          "lone steps/min",
          "via HAProxy, stable",
          "lone median step ms",
          "via HAProxy median step ms",
          "HAProxy's stable programs run lone too",
        ],
        CELLS.map((cell, i) => {
          const mine = hapStable.filter((s) => ringOf(s.programId) === cell);
          const loneSteps = stepsIn(loneRecords[i], lt0, lw);
          const loneRan = new Set(loneSteps.map((s) => s.programId));
          const hapRan = new Set(mine.map((s) => s.programId));
          return [
            cell,
            String(loneConc[i]),
            f1(perLone[i]),
            f1((mine.length * 60_000) / phaseMs),
            f0(median(loneSteps.map((s) => s.endMs - s.startMs))),
            f0(median(mine.map((s) => s.endMs - s.startMs))),
            `${[...hapRan].filter((p) => loneRan.has(p)).length} of ${hapRan.size}`,
          ];
        }),
      ),
    );
    print(
      `while measured, CPU (% of one CPU): 6 backends ${f1(loneCpu.backends)}, 3 routers ${f1(loneCpu.cells)}, driver ${f1(loneCpu.driver)}, other ${f1(loneCpu.other)}; machine busy ${f0(loneCpu.machine)} %`,
    );
    print(
      `three lone routers: ${f1(loneStepsPerMin)} steps/min summed (${lostLone} failed requests); ` +
        `through HAProxy while stable: ${f1(stableStepsPerMin)} steps/min; ratio ${f3(stableStepsPerMin / loneStepsPerMin)}`,
    );
  }

  // Goals.
  const hung = failed.filter((x) => x.outcome === "hung").length;
  const below = aff.stable.below + aff.dead.below + aff.back.below;
  const goals: Goal[] = [
    {
      name: "affinity 100 % (stable; dead, back after HAProxy saw the change)",
      measured: `${f2(100 * aff.stable.meanShare)} / ${f2(100 * aff.dead.meanShare)} / ${f2(100 * aff.back.meanShare)} %, ${below} programs below 100 %`,
      met: below === 0,
    },
    {
      name: `lost only requests in flight on ${VICTIM_NAME} at the kill; none hung`,
      measured: `${failed.length} lost (${lostAtKill.length} in flight on ${VICTIM_NAME} at the kill, ${lostElse.length} other), ${hung} hung`,
      met: lostElse.length === 0 && hung === 0,
    },
    {
      name: "to another cell ≤ one check interval + one step (p50, first request after kill → answered)",
      measured: `p50 ${f0(median(fromAttempt))} ms, max ${f0(fromAttempt.length === 0 ? Number.NaN : Math.max(...fromAttempt))} ms, bound ${f0(bound)} ms`,
      met: fromAttempt.length === 0 ? null : median(fromAttempt) <= bound,
    },
    {
      name: "steps/min through HAProxy (stable) ÷ three lone routers ≥ 0.95",
      measured: loneStepsPerMin === null ? "not measured" : f3(stableStepsPerMin / loneStepsPerMin),
      met: loneStepsPerMin === null ? null : stableStepsPerMin / loneStepsPerMin >= 0.95,
    },
    {
      name: "p50 latency HAProxy adds ≤ 0.3 ms (small body)",
      measured: `${f3(pct(small.haproxy, 50) - pct(small.direct, 50))} ms (~200 KB body: ${f3(pct(large.haproxy, 50) - pct(large.direct, 50))} ms)`,
      met: small.direct.length === 0 ? null : pct(small.haproxy, 50) - pct(small.direct, 50) <= 0.3,
    },
  ];
  print("");
  print("goals");
  print(
    renderTable(
      ["goal", "measured", "met"],
      goals.map((g) => [g.name, g.measured, g.met === null ? "n/a" : g.met ? "met" : "not met"]),
    ),
  );
  process.exitCode = goals.every((g) => g.met !== false) ? 0 : 1;
}

try {
  await main();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await closeAll();
}
