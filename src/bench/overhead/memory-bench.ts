/**
 * `bench:memory`: what a live program costs the router in memory. `maitred serve --router tr`
 * runs as its own process in front of simulated backends, each its own process too (their KV
 * caches and prefix indexes are not the router's), with the access log on, as operators run
 * it. Live programs that are never released (one short request each, distinct program ids) are
 * made in steps up to each level; after each step the router's settled RSS and V8 heap are
 * read (router-memory.ts), and each less the base, over the live programs, is their cost.
 *
 * The base is read after a warm-up of requests without a program id, which compile the
 * router's code paths and open its pools and leave no live program. The router runs with its
 * inspector on a loopback port (NODE_OPTIONS=--inspect, its code unchanged), through which a
 * full collection is asked before each read.
 */

import { integer, listOfItems } from "../../config/values.ts";
import { freePort } from "../free-port.ts";
import { type MaitredProcess, startMaitredProcess } from "../maitred-process.ts";
import { markdownTable } from "../markdown-table.ts";
import type { ScriptSpec } from "../script-args.ts";
import { progress } from "../script-entry.ts";
import { backendsFlag, concurrencyFlag } from "../script-flags.ts";
import {
  createPrograms,
  livePrograms,
  type MemoryProbe,
  type MemoryReading,
  routerProbe,
  settledMemory,
} from "./router-memory.ts";

export const BENCH_MEMORY_SPEC = {
  name: "bench:memory",
  summary:
    "What a live program costs the router in memory: its RSS and V8 heap at rising numbers of live programs, and both per live program.",
  runtime:
    "not timed; scales with the largest --levels (one request per live program, --concurrency at a time) plus --settle-reads reads of 0.5 s per level; progress on stderr",
  flags: {
    levels: {
      arg: "<list>",
      default: "100,1000,10000",
      description: "live programs to read the router at, rising",
      check: listOfItems(integer(1, 10_000_000)).refine(
        (l) => l.every((n, i) => i === 0 || n > l[i - 1]),
        { error: "must rise" },
      ),
    },
    concurrency: concurrencyFlag("32", "requests in flight while programs are created", {
      max: 10_000,
    }),
    backends: backendsFlag("2", "simulated backends, each its own process"),
    "settle-reads": {
      arg: "<n>",
      default: "6",
      description: "reads per level; the median RSS and the smallest heap are kept",
      check: integer(1, 1000),
    },
    warmup: {
      arg: "<n>",
      default: "500",
      description: "requests without a program id first, so the base is a router that has served",
      check: integer(0, 10_000_000),
    },
    json: {
      arg: "<file>",
      default: "/tmp/bench-memory.json",
      description: "where the figures go as JSON",
    },
  },
} satisfies ScriptSpec;

/** Between two reads of a settling router. */
const READ_EVERY_MS = 500;
/**
 * KV blocks per simulated backend: enough that 10,000 idle programs' booked tokens (a short
 * context plus the per-program headroom) never fill a backend, so no program is held or paused
 * and every one stays live and placed.
 */
const NUM_GPU_BLOCKS = 400_000;
/** What the requests name when the router lists no model. */
const FALLBACK_MODEL = "meta-llama/Llama-3.1-8B-Instruct";

export interface MemoryRow extends MemoryReading {
  live: number;
  failed: number;
  /** Null on the base row, which has no live program. */
  rssPerProgramBytes: number | null;
  heapPerProgramBytes: number | null;
}

export interface MemoryOptions {
  levels: readonly number[];
  concurrency: number;
  settleReads: number;
  warmup: number;
}

/** What a router under test offers the measure: where to send requests, and how to read it. */
export interface MeasuredRouter {
  url: string;
  model: string;
  probe: MemoryProbe;
}

/**
 * The base row after the warm-up, then a row per level: the programs made up to it, the
 * router read once settled. `warmupFailed` counts warm-up requests not answered 200.
 */
export async function measureMemory(
  router: MeasuredRouter,
  o: MemoryOptions,
): Promise<{ warmupFailed: number; rows: MemoryRow[] }> {
  const make = (from: number, to: number, named = true) =>
    createPrograms({
      url: router.url,
      model: router.model,
      from,
      to,
      named,
      concurrency: o.concurrency,
    });
  // The first requests a router serves compile its code paths and open its connection pools:
  // a cost paid once, not per program. Requests without a program id pay it and leave no
  // live program behind, so the baseline is a router that has served.
  progress(`warm-up: ${o.warmup} requests without a program id`);
  const warmupFailed = await make(0, o.warmup, false);
  const base = await settledMemory(router.probe, o.settleReads);
  const rows: MemoryRow[] = [
    { live: 0, failed: 0, ...base, rssPerProgramBytes: null, heapPerProgramBytes: null },
  ];
  let made = 0;
  for (const [i, level] of o.levels.entries()) {
    progress(`level ${i + 1}/${o.levels.length}: ${level} live programs`);
    const failed = await make(made, level);
    made = level;
    const s = await settledMemory(router.probe, o.settleReads);
    const live = await livePrograms(router.url);
    rows.push({
      live,
      failed,
      ...s,
      rssPerProgramBytes: (s.rssBytes - base.rssBytes) / live,
      heapPerProgramBytes: (s.heapUsedBytes - base.heapUsedBytes) / live,
    });
  }
  return { warmupFailed, rows };
}

/**
 * The whole run: `backends` simulated backends and a router with its inspector on, each its
 * own process, measured, then stopped.
 */
export async function runMemoryBench(o: MemoryOptions & { backends: number }) {
  const backends: MaitredProcess[] = [];
  let router: MaitredProcess | null = null;
  try {
    for (let i = 0; i < o.backends; i++) {
      backends.push(
        await startMaitredProcess(
          [
            "sim-backend",
            ...["--port", "0", "--num-gpu-blocks", String(NUM_GPU_BLOCKS)],
            ...["--time-scale", "100", "--seed", String(i + 1)],
            // Its ready line is logged at info.
            ...["--log-level", "info"],
          ],
          "sim-backend listening",
        ),
      );
    }
    const inspectPort = await freePort();
    router = await startMaitredProcess(
      [
        "serve",
        ...["--backends", backends.map((b) => b.url).join(",")],
        ...["--host", "127.0.0.1", "--port", "0", "--router", "tr", "--scheduler-interval", "1"],
      ],
      "maitred listening",
      { ...process.env, NODE_OPTIONS: `--inspect=127.0.0.1:${inspectPort}` },
    );
    const models = (await (await fetch(`${router.url}/v1/models`)).json()) as {
      data: { id: string }[];
    };
    const probe = routerProbe(router, inspectPort, READ_EVERY_MS);
    const model = models.data[0]?.id ?? FALLBACK_MODEL;
    return await measureMemory({ url: router.url, model, probe }, o);
  } finally {
    await router?.close();
    await Promise.all(backends.map((b) => b.close()));
  }
}

/** The printed table: each row's figures in MiB, the per-program ones in KiB. */
export function memoryTable(rows: readonly MemoryRow[]): string {
  const mb = (b: number) => (b / 2 ** 20).toFixed(1);
  const kb = (b: number | null) => (b === null ? "-" : (b / 1024).toFixed(1));
  return markdownTable(
    [
      "live programs",
      "failed",
      "router RSS (MiB)",
      "heap used (MiB)",
      "RSS per live program (KiB)",
      "heap per live program (KiB)",
    ],
    rows.map((r) => [
      r.live.toLocaleString("en"),
      String(r.failed),
      mb(r.rssBytes),
      mb(r.heapUsedBytes),
      kb(r.rssPerProgramBytes),
      kb(r.heapPerProgramBytes),
    ]),
    0,
  );
}
