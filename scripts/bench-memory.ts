/**
 * What a live program costs the router in memory. `maitred serve --router tr` runs as its own
 * process in front of simulated backends, each its own process too (their KV caches and prefix
 * indexes are not the router's), with the access log on, as operators run it. The script
 * creates live programs that are never released (one short request each, `max_tokens` 1,
 * distinct `x-program-id`s), in steps up to 100, 1,000 and 10,000 live programs, lets the router
 * settle after each step, and prints its resident memory (/proc/<pid>/status VmRSS), its V8 heap
 * in use (`nodejs_heap_size_used_bytes` from its /metrics) and the RSS per live program,
 * (RSS_N − RSS_0) / N. RSS_0 is read after a warm-up of requests sent without a program id
 * (--warmup, default 500; 0 for a cold router), which compile the router's code paths and open
 * its pools and leave no live program. Writes the figures as JSON too.
 *
 * Garbage would otherwise drown a hundred programs' few hundred KB: the router runs with its
 * inspector on a loopback port (NODE_OPTIONS=--inspect, the router's code unchanged), and before
 * each read the script asks V8 for a full collection through it (the DevTools protocol's
 * HeapProfiler.collectGarbage, over Node's own WebSocket). It then reads the router a few
 * times while it idles and takes the median RSS and the smallest heap figure, the settled
 * values.
 *
 *   node scripts/bench-memory.ts [--levels 100,1000,10000] [--concurrency 32] [--backends 2]
 *       [--settle-reads 6] [--warmup 500]
 *       [--json /tmp/bench-memory.json]
 */
import { writeFileSync } from "node:fs";
import { freePort } from "../src/bench/free-port.ts";
import { type MaitredProcess, startMaitredProcess } from "../src/bench/maitred-process.ts";
import { markdownTable } from "../src/bench/markdown-table.ts";
import { median } from "../src/bench/percentile.ts";
import { processRssBytes } from "../src/bench/process-stats.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";
import { backendsFlag, concurrencyFlag } from "../src/bench/script-flags.ts";
import { integer, listOfItems } from "../src/config/values.ts";

const SPEC = {
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
const a = scriptArgs(SPEC);
const levels = a.values.levels.split(",").map(Number);
const concurrency = Number(a.values.concurrency);
const settleReads = Number(a.values["settle-reads"]);
const warmup = Number(a.values.warmup);
/** Between two reads of a settling router. */
const READ_EVERY_MS = 500;
/**
 * KV blocks per simulated backend: enough that 10,000 idle programs' booked tokens (a short
 * context plus the per-program headroom) never fill a backend, so no program is held or paused
 * and every one stays live and placed.
 */
const NUM_GPU_BLOCKS = 400_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^${name} ([0-9.e+-]+)$`, "m").exec(text);
  if (m === null) throw new Error(`${name} not on ${url}/metrics`);
  return Number(m[1]);
}

/** Live programs, by the router's own count (`maitred_programs`, every status and state). */
async function livePrograms(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let n = 0;
  for (const m of text.matchAll(/^maitred_programs\{[^}]*\} ([0-9.e+-]+)$/gm)) n += Number(m[1]);
  return n;
}

/** A full garbage collection in the router, asked through its inspector. */
async function collectGarbage(inspectPort: number): Promise<void> {
  const [target] = (await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  if (target === undefined) throw new Error("the router's inspector lists no target");
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  await new Promise<void>((resolve, reject) => {
    ws.onmessage = (m) => {
      const reply = JSON.parse(String(m.data)) as { id?: number; error?: unknown };
      if (reply.id !== 1) return;
      if (reply.error === undefined) resolve();
      else reject(new Error(JSON.stringify(reply.error)));
    };
    ws.send(JSON.stringify({ id: 1, method: "HeapProfiler.collectGarbage" }));
  });
  ws.close();
}

/** The settled figures: median RSS and the smallest heap in use over `settleReads` reads. */
async function settled(router: MaitredProcess, inspectPort: number) {
  const rss: number[] = [];
  const heap: number[] = [];
  for (let i = 0; i < settleReads; i++) {
    await sleep(READ_EVERY_MS);
    await collectGarbage(inspectPort);
    heap.push(await metric(router.url, "nodejs_heap_size_used_bytes"));
    rss.push(processRssBytes(router.pid));
  }
  return { rssBytes: median(rss), heapUsedBytes: Math.min(...heap) };
}

/**
 * One short request for each of the programs `from`..`to` − 1, `concurrency` at a time; with
 * `named` false, the same requests without a program id (each a program of one step, released
 * when it ends: nothing stays live).
 */
async function createPrograms(url: string, model: string, from: number, to: number, named = true) {
  let next = from;
  let failed = 0;
  const worker = async () => {
    while (next < to) {
      const i = next++;
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(named ? { "x-program-id": `mem-${i}` } : {}),
        },
        body: JSON.stringify({
          model,
          messages: [{ role: "user", content: `program ${i}: say one word` }],
          max_tokens: 1,
        }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) failed++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return failed;
}

const backends: MaitredProcess[] = [];
let router: MaitredProcess | null = null;
try {
  for (let i = 0; i < Number(a.values.backends); i++) {
    backends.push(
      await startMaitredProcess(
        [
          "sim-backend",
          "--port",
          "0",
          "--num-gpu-blocks",
          String(NUM_GPU_BLOCKS),
          "--time-scale",
          "100",
          "--seed",
          String(i + 1),
          // Its ready line is logged at info.
          "--log-level",
          "info",
        ],
        "sim-backend listening",
      ),
    );
  }
  const inspectPort = await freePort();
  router = await startMaitredProcess(
    [
      "serve",
      "--backends",
      backends.map((b) => b.url).join(","),
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--router",
      "tr",
      "--scheduler-interval",
      "1",
    ],
    "maitred listening",
    { ...process.env, NODE_OPTIONS: `--inspect=127.0.0.1:${inspectPort}` },
  );
  const models = (await (await fetch(`${router.url}/v1/models`)).json()) as {
    data: { id: string }[];
  };
  const model = models.data[0]?.id ?? "meta-llama/Llama-3.1-8B-Instruct";

  const rows: {
    live: number;
    failed: number;
    rssBytes: number;
    heapUsedBytes: number;
    rssPerProgramBytes: number | null;
    heapPerProgramBytes: number | null;
  }[] = [];
  // The first requests a router serves compile its code paths and open its connection pools:
  // a cost paid once, not per program. Requests without a program id pay it and leave no
  // live program behind, so the baseline is a router that has served.
  progress(`warm-up: ${warmup} requests without a program id`);
  const warmupFailed = await createPrograms(router.url, model, 0, warmup, false);
  if (warmupFailed > 0) console.log(`warm-up: ${warmupFailed} of ${warmup} requests failed`);
  const base = await settled(router, inspectPort);
  rows.push({ live: 0, failed: 0, ...base, rssPerProgramBytes: null, heapPerProgramBytes: null });
  let made = 0;
  for (const [i, level] of levels.entries()) {
    progress(`level ${i + 1}/${levels.length}: ${level} live programs`);
    const failed = await createPrograms(router.url, model, made, level);
    made = level;
    const s = await settled(router, inspectPort);
    const live = await livePrograms(router.url);
    rows.push({
      live,
      failed,
      ...s,
      rssPerProgramBytes: (s.rssBytes - base.rssBytes) / live,
      heapPerProgramBytes: (s.heapUsedBytes - base.heapUsedBytes) / live,
    });
  }

  const mb = (b: number) => (b / 2 ** 20).toFixed(1);
  const kb = (b: number | null) => (b === null ? "-" : (b / 1024).toFixed(1));
  console.log(
    markdownTable(
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
    ),
  );
  writeFileSync(
    a.values.json,
    `${JSON.stringify({ levels, concurrency, warmup, rows }, null, 2)}\n`,
  );
  console.log(`(JSON: ${a.values.json})`);
} finally {
  await router?.close();
  await Promise.all(backends.map((b) => b.close()));
}
