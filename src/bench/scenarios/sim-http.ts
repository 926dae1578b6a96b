/**
 * `npm run bench:sim-http`: how many tiny requests per second the simulated backend's HTTP
 * surface sustains. Chat requests with max_tokens 1–4 at a high time scale, so the engine's
 * modelled time is negligible and the HTTP path dominates, over many keep-alive connections.
 * Plain and streamed requests run one after the other against the same server, so their figures
 * compare. The backend runs as its own process unless asked otherwise, so the load generator
 * does not share its event loop.
 */
import { Pool } from "undici";
import { integer, nonNegative, positive } from "../../config/values.ts";
import { startSimBackend } from "../../sim-server/start-sim-backend.ts";
import { startMaitredProcess } from "../maitred-process.ts";
import { percentile } from "../percentile.ts";
import type { ScriptSpec } from "../script-args.ts";
import { jsonFlag, timeScaleFlag } from "../script-flags.ts";

export const SIM_HTTP_SPEC = {
  name: "bench:sim-http",
  summary:
    "Tiny chat requests per second the simulated backend's HTTP surface sustains, plain then streamed, with p50/p99 latency.",
  runtime:
    "about 25 s: two modes of --warmup + --seconds (2 + 10 s) each, plus the backend's start",
  flags: {
    seconds: {
      arg: "<s>",
      default: "10",
      description: "measured seconds per mode",
      check: positive(),
    },
    warmup: {
      arg: "<s>",
      default: "2",
      description: "unmeasured seconds before each mode",
      check: nonNegative(),
    },
    connections: {
      arg: "<n>",
      default: "64",
      description: "keep-alive connections",
      check: integer(1, 100_000),
    },
    "time-scale": timeScaleFlag(
      "10000",
      "the backend's time scale (high: its modelled time is negligible)",
    ),
    "in-process": {
      type: "boolean",
      description: "start the backend in this process instead of a child process",
    },
    json: jsonFlag("also write the results as JSON"),
  },
} satisfies ScriptSpec;

/** Tiny requests: 1–4 output tokens, so the answer's size is not what is measured. */
const MAX_TOKENS = [1, 2, 3, 4];
/** KV and context large enough that no tiny request ever waits for room. */
const BACKEND = { numGpuBlocks: 65_536, maxModelLen: 8192 };

export interface SimHttpOptions {
  /** Measured seconds per mode. */
  seconds: number;
  /** Unmeasured seconds before each mode's measuring starts. */
  warmupS: number;
  connections: number;
  /** The backend's time scale, as the flag reads (passed on as written). */
  timeScale: string;
  /** The backend in this process (startSimBackend) instead of `maitred sim-backend`. */
  inProcess: boolean;
}

export interface SimHttpResult {
  mode: "json" | "stream";
  /** Measured requests answered 200. */
  requests: number;
  /** Measured requests answered otherwise. */
  errors: number;
  seconds: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

/** The simulated backend to measure, started either way, and its stop. */
export async function startSimHttpBackend(
  o: Pick<SimHttpOptions, "timeScale" | "inProcess">,
): Promise<{ url: string; stop(): Promise<void> }> {
  if (o.inProcess) {
    const b = await startSimBackend({ port: 0, timeScale: o.timeScale, ...BACKEND });
    return { url: b.url, stop: () => b.close() };
  }
  const p = await startMaitredProcess(
    [
      "sim-backend",
      "--port",
      "0",
      "--time-scale",
      o.timeScale,
      "--num-gpu-blocks",
      String(BACKEND.numGpuBlocks),
      "--max-model-len",
      String(BACKEND.maxModelLen),
    ],
    "sim-backend listening",
  );
  return { url: p.url, stop: () => p.close() };
}

/**
 * One mode's load: `connections` workers send tiny requests back to back until warm-up plus
 * `seconds` have passed on `now`; only the requests that start after the warm-up count.
 */
export async function runSimHttpMode(
  pool: Pick<Pool, "request">,
  o: Pick<SimHttpOptions, "seconds" | "warmupS" | "connections"> & { stream: boolean },
  now: () => number = () => performance.now(),
): Promise<SimHttpResult> {
  let seq = 0;
  const latencies: number[] = [];
  let errors = 0;
  let measuring = false;
  const one = async () => {
    const i = seq++;
    const body = JSON.stringify({
      messages: [{ role: "user", content: `tiny request ${i}` }],
      max_tokens: MAX_TOKENS[i % MAX_TOKENS.length],
      ignore_eos: true,
      stream: o.stream,
    });
    const t0 = now();
    const res = await pool.request({
      method: "POST",
      path: "/v1/chat/completions",
      headers: { "content-type": "application/json" },
      body,
    });
    await res.body.text();
    if (!measuring) return;
    if (res.statusCode !== 200) errors++;
    else latencies.push(now() - t0);
  };
  const warmEnd = now() + o.warmupS * 1000;
  const end = warmEnd + o.seconds * 1000;
  let start = 0;
  const worker = async () => {
    while (now() < end) {
      if (!measuring && now() >= warmEnd) {
        measuring = true;
        start = now();
      }
      await one();
    }
  };
  await Promise.all(Array.from({ length: o.connections }, worker));
  const elapsed = (now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    mode: o.stream ? "stream" : "json",
    requests: latencies.length,
    errors,
    seconds: elapsed,
    reqPerSec: latencies.length / elapsed,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}

/** Plain, then streamed, against one backend; `onResult` hears each mode as it ends. */
export async function runSimHttp(
  o: SimHttpOptions,
  onResult: (r: SimHttpResult) => void = () => {},
): Promise<SimHttpResult[]> {
  const server = await startSimHttpBackend(o);
  const pool = new Pool(server.url, { connections: o.connections, pipelining: 1 });
  const results: SimHttpResult[] = [];
  try {
    for (const stream of [false, true]) {
      const r = await runSimHttpMode(pool, { ...o, stream });
      results.push(r);
      onResult(r);
    }
  } finally {
    await pool.close();
    await server.stop();
  }
  return results;
}

/** The line the script prints for one mode. */
export const simHttpLine = (r: SimHttpResult, o: SimHttpOptions) =>
  `${r.mode.padEnd(6)} ${r.reqPerSec.toFixed(0).padStart(7)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  (${r.requests} requests, ${r.errors} errors, ${r.seconds.toFixed(1)} s, ${o.connections} connections, time-scale ${o.timeScale}, ${o.inProcess ? "in-process" : "child process"})`;

/** What `--json` writes. */
export const simHttpJson = (o: SimHttpOptions, results: SimHttpResult[]) =>
  `${JSON.stringify({ connections: o.connections, timeScale: Number(o.timeScale), results }, null, 2)}\n`;
