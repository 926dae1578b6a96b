/**
 * Proxy overhead of maitred on loopback, measured side by side against a direct connection
 * to the same upstream in one run (ratios from one script).
 *
 * First, per answer length (`tokens` phase): the router as users run it (`maitred serve` in
 * its own process) in front of an upstream that answers each chat completion with exactly
 * `max_tokens` tokens, against that upstream directly, for clients asking for a plain answer
 * and for a stream, at 4, 64 and 512 tokens, from a fixed number of keep-alive connections
 * for a fixed time. Per row: requests per second both ways and, read from the router
 * process's own CPU time (/proc/<pid>/stat), its CPU per request and per SSE event the
 * upstream wrote (counted by the upstream, so exact). With `--apis chat,messages,responses`
 * each case runs once per API (the vLLM-like upstream serves the Anthropic Messages and OpenAI
 * Responses streams too; the fast one only chat). Three upstreams, one table:
 *
 *   - `vllm`: vllm-like-upstream.ts, which writes one SSE event per engine step, each in its
 *     own write, as vLLM does (steps every turn of its event loop unless --interval-ms);
 *   - `vllm-one-write`: the same bytes, each whole answer in one write;
 *   - `fast`: the minimal raw-socket upstream below, which writes each whole answer at once
 *     (its chunks carry fewer fields than vLLM's).
 *
 * Then the phases measured against the fast upstream, with the router in this process's
 * main thread (its CPU read from that thread):
 *
 *   1. latency: sequential small non-streaming requests on one connection, p50/p99 direct vs
 *      through the router; the difference is what maitred adds;
 *   2. throughput: small non-streaming requests from 64 keep-alive connections (undici Pool),
 *      requests per second direct vs through the router;
 *   3. SSE: streams of many small chunks, chunks per second direct vs through the router;
 *   4. body: sequential streamed requests with a large agent body (~380 KiB of conversation),
 *      once with a body maitred forwards as it is (program id in a header, usage asked for)
 *      and once with one it must change (program id in the body, no usage asked for); the
 *      ratio is what changing the body costs.
 *
 * A plain request through the router is streamed from the upstream and rebuilt, as maitred
 * does for every plain request, so the plain rows and phases 1 and 2 measure that path
 * against a plain answer from the upstream directly.
 * The fast upstream runs on raw sockets in a worker thread; the load generator runs in another
 * worker thread, never in the router's process; the router runs in `tr` mode with a program
 * id in every request (the real hot path: identity, body rewrite, scheduler events, usage
 * books). Phases alternate direct/router.
 *
 *   node scripts/bench-proxy.ts [--seconds 5] [--requests 5000] [--connections 64]
 *                               [--token-seconds 4] [--token-connections 16]
 *                               [--upstreams vllm,vllm-one-write,fast] [--interval-ms 0]
 *                               [--token-cases plain:4:64,streamed:512:16,…]
 *                               [--apis chat,messages,responses]
 *                               [--router-cpu-profile-dir DIR] [--router-args="…"]
 *                               [--router tr|default] [--upstream-stream always|as-client]
 *                               [--phases tokens,latency,throughput,sse,body]
 *                               [--json out.json] [--cpu-profile out.cpuprofile
 *                               --cpu-profile-phase throughput|latency|sse]
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { Pool } from "undici";
import { startFastUpstream } from "../src/bench/fast-upstream.ts";
import { percentile } from "../src/bench/percentile.ts";
import { type CountingUpstream, forkVllmLike, runTokenLoad } from "../src/bench/proxy-bench-kit.ts";
import {
  marginalLines,
  measureTokens,
  type TokenCase,
  type TokenRow,
  tokenCases,
  tokensTable,
} from "../src/bench/proxy-tokens.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { flagError, progress, scriptArgs } from "../src/bench/script-entry.ts";
import { jsonFlag } from "../src/bench/script-flags.ts";
import type { Api, UpstreamStats } from "../src/bench/vllm-like-upstream.ts";
import { ROUTER_SETTINGS } from "../src/config/router-config.ts";
import { settingOf } from "../src/config/setting.ts";
import { integer, list, listOf, nonNegative, oneOf, positive } from "../src/config/values.ts";

interface LoadCommand {
  kind: "latency" | "throughput" | "sse" | "body" | "tokens";
  /** Phase 4: the body maitred forwards unchanged, or the one it must change. */
  variant?: "kept" | "changed";
  url: string;
  requests: number;
  seconds: number;
  connections: number;
  /** `tokens` phase: whether the client asks for a stream, and the answer's length. */
  stream?: boolean;
  tokens?: number;
  /** `tokens` phase: the API asked. */
  api?: Api;
}

/** Chunks per SSE stream in phase 3, written SSE_GROUP at a time. */
const SSE_CHUNKS = 2000;

/** OpenAI-style chat request as agent harnesses send it; `program_id` is maitred's field. */
const body = (programId: string, stream: boolean) =>
  JSON.stringify({
    model: "m",
    messages: [{ role: "user", content: "Summarise the tool output in one line." }],
    max_tokens: stream ? SSE_CHUNKS : 8,
    stream,
    program_id: programId,
  });

/**
 * A long agent conversation (~380 KiB): tool results full of JSON and code, so the body has
 * many escaped quotes and newlines, as real ones do.
 */
function agentMessages(): unknown[] {
  const toolOutput = (i: number) =>
    Array.from(
      { length: 60 },
      (_, k) =>
        `{"file": "src/module_${i}_${k}.py", "line": ${k * 7}, "text": "def f_${k}(x):\n    return x * ${k}  # "note""}`,
    ).join("\n");
  const messages: unknown[] = [{ role: "system", content: "You are a coding agent." }];
  for (let i = 0; i < 57; i++) {
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [
        {
          id: `call_${i}`,
          type: "function",
          function: { name: "grep", arguments: `{"q":"f_${i}"}` },
        },
      ],
    });
    messages.push({ role: "tool", tool_call_id: `call_${i}`, content: toolOutput(i) });
  }
  return messages;
}

/** Phase 4's bodies: the same conversation, forwarded as it is or changed by maitred. */
function largeBody(variant: "kept" | "changed", messages: unknown[]): string {
  const common = { model: "m", messages, max_tokens: 8, stream: true };
  return JSON.stringify(
    variant === "kept"
      ? { ...common, stream_options: { include_usage: true } }
      : { ...common, program_id: "agent-large" },
  );
}

// ─── upstream worker ───────────────────────────────────────────────────────────────────────
/** The fast upstream (fast-upstream.ts) in this worker thread, its counters asked for by message. */
function runUpstream(): void {
  void startFastUpstream(SSE_CHUNKS).then((upstream) => {
    parentPort?.postMessage({ url: upstream.url });
    parentPort?.on("message", (m: { type?: string }) => {
      if (m.type === "stats") parentPort?.postMessage({ stats: upstream.stats() });
    });
  });
}

// ─── load generator worker ─────────────────────────────────────────────────────────────────
async function runLoad(cmd: LoadCommand): Promise<Record<string, number>> {
  if (cmd.kind === "tokens") {
    const r = await runTokenLoad({
      url: cmd.url,
      stream: cmd.stream === true,
      tokens: cmd.tokens ?? 8,
      connections: cmd.connections,
      seconds: cmd.seconds,
      api: cmd.api,
    });
    return { ...r };
  }
  const pool = new Pool(cmd.url, {
    connections: cmd.kind === "latency" ? 1 : cmd.connections,
    pipelining: 1,
  });
  const headers = { "content-type": "application/json" };
  const call = async (b: string, h: Record<string, string> = headers) => {
    const res = await pool.request({
      method: "POST",
      path: "/v1/chat/completions",
      headers: h,
      body: b,
    });
    await res.body.arrayBuffer();
    if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
  };
  try {
    if (cmd.kind === "latency" || cmd.kind === "body") {
      const times: number[] = [];
      const large = cmd.kind === "body";
      const b = large
        ? largeBody(cmd.variant ?? "kept", agentMessages())
        : body("latency-0", false);
      const h =
        large && cmd.variant === "kept" ? { ...headers, "x-program-id": "agent-large" } : headers;
      const n = large ? Math.max(50, Math.round(cmd.requests / 10)) : cmd.requests;
      for (let i = 0; i < n; i++) {
        const t = process.hrtime.bigint();
        await call(b, h);
        times.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      times.sort((x, y) => x - y);
      return {
        p50_ms: percentile(times, 50),
        p99_ms: percentile(times, 99),
        n: times.length,
        bytes: Buffer.byteLength(b),
      };
    }
    if (cmd.kind === "throughput") {
      const bodies = Array.from({ length: cmd.connections }, (_, i) => body(`agent-${i}`, false));
      let count = 0;
      const end = performance.now() + cmd.seconds * 1000;
      await Promise.all(
        bodies.map(async (b) => {
          while (performance.now() < end) {
            await call(b);
            count++;
          }
        }),
      );
      return { rps: count / cmd.seconds, n: count };
    }
    // SSE: a few concurrent streams, each read to the end; chunks per second overall.
    const streams = 4;
    let chunks = 0;
    let bytes = 0;
    const started = performance.now();
    const end = started + cmd.seconds * 1000;
    await Promise.all(
      Array.from({ length: streams }, async (_, i) => {
        const b = body(`stream-${i}`, true);
        while (performance.now() < end) {
          const res = await pool.request({
            method: "POST",
            path: "/v1/chat/completions",
            headers,
            body: b,
          });
          for await (const part of res.body) bytes += (part as Buffer).length;
          chunks += SSE_CHUNKS;
        }
      }),
    );
    const secs = (performance.now() - started) / 1000;
    return { chunks_per_s: chunks / secs, mb_per_s: bytes / secs / 1e6 };
  } finally {
    await pool.close();
  }
}

function runLoadWorker(): void {
  parentPort?.on("message", (cmd: LoadCommand) => {
    runLoad(cmd).then(
      (r) => parentPort?.postMessage({ ok: r }),
      (e: Error) => parentPort?.postMessage({ error: e.message }),
    );
  });
}

// ─── profiling (--cpu-profile FILE: the router's thread during its throughput phase) ──────
async function startProfile(): Promise<Session> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return session;
}

async function stopProfile(session: Session, file: string): Promise<void> {
  const { profile } = await session.post("Profiler.stop");
  writeFileSync(file, JSON.stringify(profile));
  session.disconnect();
}

// ─── main ──────────────────────────────────────────────────────────────────────────────────
const routerSchema = (key: string) => settingOf(ROUTER_SETTINGS, key, "maitred serve").schema;

const SPEC = {
  name: "bench:proxy",
  summary:
    "maitred's proxy overhead on loopback, against a direct connection to the same upstream: router CPU per request and per SSE event by answer length (beside bare TCP and HTTP relays), then latency, throughput, SSE and large-body phases.",
  runtime:
    "about 7 min, counted from the flags (not timed): per upstream 8 s of warm-up and 7 cases × 4 paths × --token-seconds (4 s), then four short phases; scales with --upstreams × --apis × --token-seconds; progress on stderr",
  flags: {
    seconds: {
      arg: "<s>",
      default: "5",
      description: "length of the throughput and SSE phases",
      check: positive(),
    },
    requests: {
      arg: "<n>",
      default: "5000",
      description:
        "sequential requests of the latency phase (a tenth, at least 50, with the large body)",
      check: integer(1, 100_000_000),
    },
    connections: {
      arg: "<n>",
      default: "64",
      description: "keep-alive connections of the throughput phase",
      check: integer(1, 100_000),
    },
    router: {
      arg: "<mode>",
      default: "tr",
      description: "the router's --router: tr or default",
      check: routerSchema("router"),
    },
    "upstream-stream": {
      arg: "<mode>",
      default: "always",
      description: "the router's --upstream-stream: always or as-client",
      check: routerSchema("upstream-stream"),
    },
    json: jsonFlag("also write the figures as JSON"),
    "cpu-profile": {
      arg: "<file>",
      description: "write a CPU profile of the in-process router during --cpu-profile-phase",
    },
    phases: {
      arg: "<list>",
      default: "tokens,latency,throughput,sse,body",
      description: "which phases run",
      check: listOf(["tokens", "latency", "throughput", "sse", "body"]),
    },
    "cpu-profile-phase": {
      arg: "<phase>",
      default: "throughput",
      description: "the phase --cpu-profile covers: latency, throughput or sse",
      check: oneOf(["latency", "throughput", "sse"]),
    },
    "token-seconds": {
      arg: "<s>",
      default: "4",
      description: "length of each tokens case on each path",
      check: positive(),
    },
    "token-connections": {
      arg: "<n>",
      default: "16",
      description: "connections of the tokens cases (one small plain case also at 64)",
      check: integer(1, 100_000),
    },
    upstreams: {
      arg: "<list>",
      default: "vllm,vllm-one-write,fast",
      description: "upstreams of the tokens phase, a table block each",
      check: listOf(["vllm", "vllm-one-write", "fast"]),
    },
    apis: {
      arg: "<list>",
      default: "chat",
      description: "APIs of the tokens phase: chat, messages, responses",
      check: listOf(["chat", "messages", "responses"]),
    },
    "interval-ms": {
      arg: "<ms>",
      default: "0",
      description: "the vLLM-like upstream's engine step (0: every turn of its event loop)",
      check: nonNegative(),
    },
    "router-args": {
      arg: '"<flags>"',
      default: "",
      description:
        'more `maitred serve` flags for the tokens phase\'s router (give it as --router-args="…")',
    },
    "router-cpu-profile-dir": {
      arg: "<dir>",
      description: "the tokens phase's router writes its CPU profile there",
    },
    "token-cases": {
      arg: "<list>",
      defaultText: "all",
      description: "only these tokens cases, each plain|streamed:<tokens>:<connections>",
      check: list(),
    },
  },
} satisfies ScriptSpec;

async function main(): Promise<void> {
  const { values: args, parsed } = scriptArgs(SPEC);
  const seconds = Number(args.seconds);
  const requests = Number(args.requests);
  const connections = Number(args.connections);
  const phases: LoadCommand["kind"][] = parsed.phases;

  const { resolveRouterConfig } = await import("../src/config/load-config.ts");
  const { startRouter } = await import("../src/service/service.ts");
  const { silentLogger } = await import("../src/util/logger.ts");

  const self = new URL(import.meta.url);
  const upstreamWorker = new Worker(self, { workerData: { role: "upstream" } });
  const upstreamUrl = await new Promise<string>((resolve) =>
    upstreamWorker.once("message", (m: { url: string }) => resolve(m.url)),
  );
  const loadWorker = new Worker(self, { workerData: { role: "load" } });
  const load = (
    cmd: Omit<LoadCommand, "requests" | "seconds" | "connections"> & Partial<LoadCommand>,
  ) =>
    new Promise<Record<string, number>>((resolve, reject) => {
      loadWorker.once("message", (m: { ok?: Record<string, number>; error?: string }) =>
        m.ok ? resolve(m.ok) : reject(new Error(m.error)),
      );
      loadWorker.postMessage({ requests, seconds, connections, ...cmd });
    });
  const summary: Record<string, unknown> = { mode: args.router, connections, seconds, requests };

  if (phases.includes("tokens")) {
    const intervalMs = args["interval-ms"] as string;
    const tokenSeconds = Number(args["token-seconds"]);
    const only = parsed["token-cases"];
    const caseName = (c: TokenCase) =>
      `${c.stream ? "streamed" : "plain"}:${c.tokens}:${c.connections}`;
    const apis: Api[] = parsed.apis;
    const all = tokenCases(Number(args["token-connections"]), apis);
    const unknown = only?.filter((name) => !all.some((c) => caseName(c) === name)) ?? [];
    // The cases depend on --token-connections: no table can check this flag alone.
    if (unknown.length > 0) {
      flagError(
        SPEC,
        `--token-cases: no such case ${unknown.join(", ")} (cases: ${all.map(caseName).join(", ")})`,
      );
    }
    const cases = all.filter((c) => only === undefined || only.includes(caseName(c)));
    const routerArgs = [
      "--router",
      args.router as string,
      "--upstream-stream",
      args["upstream-stream"] as string,
      ...(args["router-args"] as string).split(" ").filter((a) => a !== ""),
    ];
    const fast: CountingUpstream = {
      url: upstreamUrl,
      stats: () =>
        new Promise((resolve) => {
          upstreamWorker.once("message", (m: { stats: UpstreamStats }) => resolve(m.stats));
          upstreamWorker.postMessage({ type: "stats" });
        }),
      close: async () => {},
    };
    const starts: Record<string, () => Promise<CountingUpstream>> = {
      vllm: () => forkVllmLike(["--interval-ms", intervalMs]),
      "vllm-one-write": () => forkVllmLike(["--interval-ms", intervalMs, "--writes", "one"]),
      fast: async () => fast,
    };
    const rows: TokenRow[] = [];
    const upstreams = parsed.upstreams;
    for (const [i, name] of upstreams.entries()) {
      progress(`tokens phase, upstream ${i + 1}/${upstreams.length}: ${name}`);
      const start = starts[name];
      const upstream = await start();
      try {
        rows.push(
          ...(await measureTokens(
            name,
            upstream,
            routerArgs,
            load,
            cases,
            tokenSeconds,
            args["router-cpu-profile-dir"] as string | undefined,
          )),
        );
      } finally {
        await upstream.close();
      }
    }
    summary.tokens = rows;
    console.log(
      `\`${["node scripts/bench-proxy.ts", ...process.argv.slice(2)].join(" ")}\`, ${new Date().toISOString().slice(0, 10)}: \`maitred serve ${routerArgs.join(" ")}\` in its own process, load from another, ${tokenSeconds} s per run; vLLM-like engine steps every ${Number(intervalMs) > 0 ? `${intervalMs} ms` : "turn of its event loop"}.`,
    );
    console.log(
      "Router CPU: utime + stime of the router process (/proc/<pid>/stat) over its run. Events: SSE events the upstream wrote for those requests (role, tokens, usage, [DONE]). TCP relay: the same load through scripts/tcp-relay.ts, which copies bytes; HTTP relay: through scripts/http-relay.ts, Node's HTTP server and an undici pool with nothing between them, the floor of a proxy built as maitred is. A plain answer passes both relays as one body (they forward the request as it came), so only their streamed rows show what reading every event costs.",
    );
    if (args["router-cpu-profile-dir"] !== undefined)
      console.log("The router ran under the CPU profiler: its CPU figures include the profiler's.");
    console.log("");
    console.log(`${tokensTable(rows)}\n`);
    console.log(`${marginalLines(rows)}\n`);
  }
  if (!phases.some((p) => p !== "tokens")) {
    if (args.json) writeFileSync(args.json, `${JSON.stringify(summary, null, 2)}\n`);
    await loadWorker.terminate();
    await upstreamWorker.terminate();
    return;
  }

  const config = resolveRouterConfig({
    flags: {
      host: "127.0.0.1",
      port: "0",
      backends: upstreamUrl,
      router: args.router,
      "upstream-stream": args["upstream-stream"],
      "log-level": "silent",
    },
  });
  const router = await startRouter(config, { logger: silentLogger });
  await router.ticker.runOnce();

  const targets = { direct: upstreamUrl, router: router.url };
  const results: Record<string, Record<string, Record<string, number>>> = {
    direct: {},
    router: {},
  };
  // Warm both paths (JIT, keep-alive pools) before measuring.
  for (const url of Object.values(targets)) await load({ kind: "throughput", url, seconds: 1 });
  for (const kind of phases) {
    if (kind === "tokens") continue;
    progress(`${kind} phase, router in this process`);
    if (kind === "body") {
      // Alternate the two bodies through the router so drift hits both alike.
      for (const round of [0, 1])
        for (const variant of ["kept", "changed"] as const) {
          const r = await load({ kind, url: router.url, variant });
          const key = `body_${variant}`;
          const prev = results.router[key];
          results.router[key] = round === 0 ? r : { ...r, p50_ms: (prev.p50_ms + r.p50_ms) / 2 };
        }
      continue;
    }
    for (const [name, url] of Object.entries(targets)) {
      const profile =
        args["cpu-profile"] && name === "router" && kind === args["cpu-profile-phase"];
      const session = profile ? await startProfile() : null;
      // CPU of the router's own thread (main), independent of how busy the machine is.
      const cpu0 = process.threadCpuUsage();
      results[name][kind] = await load({ kind, url });
      const cpu = process.threadCpuUsage(cpu0);
      results[name][kind].router_cpu_s = (cpu.user + cpu.system) / 1e6;
      if (session) await stopProfile(session, args["cpu-profile"] as string);
    }
  }

  const d = results.direct;
  const r = results.router;
  const fmt = (x: number, digits = 3) => x.toFixed(digits);
  console.log(
    `maitred proxy overhead, fast upstream, router in this process (mode ${args.router}, --upstream-stream ${args["upstream-stream"]}, loopback, ${requests} sequential requests, ${seconds}s load phases)`,
  );
  if (d.latency && r.latency) {
    const l = {
      direct_p50_ms: d.latency.p50_ms,
      router_p50_ms: r.latency.p50_ms,
      added_p50_ms: r.latency.p50_ms - d.latency.p50_ms,
      direct_p99_ms: d.latency.p99_ms,
      router_p99_ms: r.latency.p99_ms,
      added_p99_ms: r.latency.p99_ms - d.latency.p99_ms,
    };
    summary.latency = l;
    console.log(
      `  latency p50   direct ${fmt(l.direct_p50_ms)} ms   router ${fmt(l.router_p50_ms)} ms   added ${fmt(l.added_p50_ms)} ms`,
    );
    console.log(
      `  latency p99   direct ${fmt(l.direct_p99_ms)} ms   router ${fmt(l.router_p99_ms)} ms   added ${fmt(l.added_p99_ms)} ms`,
    );
  }
  if (d.throughput && r.throughput) {
    const cpuPerRequestUs = (r.throughput.router_cpu_s / r.throughput.n) * 1e6;
    summary.throughput = {
      direct_rps: d.throughput.rps,
      router_rps: r.throughput.rps,
      router_cpu_us_per_request: cpuPerRequestUs,
    };
    console.log(
      `  throughput    direct ${fmt(d.throughput.rps, 0)} req/s   router ${fmt(r.throughput.rps, 0)} req/s   (${connections} connections)`,
    );
    console.log(
      `  router CPU    ${fmt(cpuPerRequestUs, 1)} µs per request on its thread → ${fmt(1e6 / cpuPerRequestUs, 0)} req/s per core`,
    );
  }
  if (d.sse && r.sse) {
    summary.sse = {
      direct_chunks_per_s: d.sse.chunks_per_s,
      router_chunks_per_s: r.sse.chunks_per_s,
      direct_mb_per_s: d.sse.mb_per_s,
      router_mb_per_s: r.sse.mb_per_s,
    };
    console.log(
      `  SSE           direct ${fmt(d.sse.chunks_per_s, 0)} chunks/s (${fmt(d.sse.mb_per_s, 1)} MB/s)   router ${fmt(r.sse.chunks_per_s, 0)} chunks/s (${fmt(r.sse.mb_per_s, 1)} MB/s)`,
    );
  }
  const kept = r.body_kept;
  const changed = r.body_changed;
  if (kept && changed) {
    summary.body = {
      bytes: kept.bytes,
      kept_p50_ms: kept.p50_ms,
      changed_p50_ms: changed.p50_ms,
      ratio: changed.p50_ms / kept.p50_ms,
    };
    console.log(
      `  large body    ${fmt(kept.bytes / 1024, 0)} KiB through the router: forwarded as it is ${fmt(kept.p50_ms)} ms p50, changed by maitred ${fmt(changed.p50_ms)} ms p50 (${fmt(changed.p50_ms / kept.p50_ms, 2)}×)`,
    );
  }
  if (args.json) writeFileSync(args.json, `${JSON.stringify(summary, null, 2)}\n`);

  await router.close();
  await loadWorker.terminate();
  await upstreamWorker.terminate();
}

if (isMainThread) await main();
else if ((workerData as { role: string }).role === "upstream") runUpstream();
else runLoadWorker();
