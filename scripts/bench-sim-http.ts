/**
 * How many tiny requests per second the simulated backend's HTTP surface sustains: chat
 * requests with max_tokens 1–4 at a high --time-scale (so the engine's modelled time is
 * negligible and the HTTP path dominates), 64 concurrent keep-alive connections via undici.
 * Non-streaming and streaming run one after the other against the same server so their
 * figures compare.
 *
 *   node scripts/bench-sim-http.ts [--seconds 10] [--connections 64] [--time-scale 10000]
 *                                  [--in-process] [--json out.json]
 *
 * By default the backend runs as a child process (`maitred sim-backend`), so the load
 * generator does not share its event loop; --in-process starts it with startSimBackend.
 */

import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { percentile } from "../src/bench/percentile.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";
import { jsonFlag, timeScaleFlag } from "../src/bench/script-flags.ts";
import { integer, nonNegative, positive } from "../src/config/values.ts";
import { startSimBackend } from "../src/sim-server/start-sim-backend.ts";

const SPEC = {
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
const { values: args } = scriptArgs(SPEC);
const SECONDS = Number(args.seconds);
const WARMUP_S = Number(args.warmup);
const CONNECTIONS = Number(args.connections);
const TIME_SCALE = args["time-scale"];
/** Tiny requests: 1–4 output tokens (the benchmark spec). */
const MAX_TOKENS = [1, 2, 3, 4];

interface Server {
  url: string;
  stop(): Promise<void>;
}

async function startServer(): Promise<Server> {
  const flags = { port: 0, timeScale: TIME_SCALE, numGpuBlocks: 65_536, maxModelLen: 8192 };
  if (args["in-process"]) {
    const b = await startSimBackend(flags);
    return { url: b.url, stop: () => b.close() };
  }
  const main = fileURLToPath(new URL("../src/main.ts", import.meta.url));
  const child: ChildProcess = spawn(
    process.execPath,
    [
      main,
      "sim-backend",
      "--port",
      "0",
      "--time-scale",
      TIME_SCALE,
      "--num-gpu-blocks",
      "65536",
      "--max-model-len",
      "8192",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  // The server logs one JSON line with its URL once it listens.
  const url = await new Promise<string>((resolve, reject) => {
    let buf = "";
    child.stderr?.on("data", (d: Buffer) => {
      buf += d.toString();
      const m = /"url":"([^"]+)"/.exec(buf);
      if (m) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`sim-backend exited with ${code}: ${buf}`)));
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

interface Result {
  mode: string;
  requests: number;
  errors: number;
  seconds: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

async function run(pool: Pool, stream: boolean): Promise<Result> {
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
      stream,
    });
    const t0 = performance.now();
    const res = await pool.request({
      method: "POST",
      path: "/v1/chat/completions",
      headers: { "content-type": "application/json" },
      body,
    });
    await res.body.text();
    if (!measuring) return;
    if (res.statusCode !== 200) errors++;
    else latencies.push(performance.now() - t0);
  };
  const deadline = { warm: performance.now() + WARMUP_S * 1000, end: 0 };
  deadline.end = deadline.warm + SECONDS * 1000;
  let start = 0;
  const worker = async () => {
    while (performance.now() < deadline.end) {
      if (!measuring && performance.now() >= deadline.warm) {
        measuring = true;
        start = performance.now();
      }
      await one();
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    mode: stream ? "stream" : "json",
    requests: latencies.length,
    errors,
    seconds: elapsed,
    reqPerSec: latencies.length / elapsed,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}

const server = await startServer();
const pool = new Pool(server.url, { connections: CONNECTIONS, pipelining: 1 });
const results: Result[] = [];
try {
  for (const stream of [false, true]) {
    const r = await run(pool, stream);
    results.push(r);
    console.log(
      `${r.mode.padEnd(6)} ${r.reqPerSec.toFixed(0).padStart(7)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  (${r.requests} requests, ${r.errors} errors, ${r.seconds.toFixed(1)} s, ${CONNECTIONS} connections, time-scale ${TIME_SCALE}, ${args["in-process"] ? "in-process" : "child process"})`,
    );
  }
} finally {
  await pool.close();
  await server.stop();
}
if (args.json)
  writeFileSync(
    args.json,
    `${JSON.stringify({ connections: CONNECTIONS, timeScale: Number(TIME_SCALE), results }, null, 2)}\n`,
  );
