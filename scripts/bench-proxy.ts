/**
 * Proxy overhead of maitred on loopback, measured side by side against a direct connection
 * to the same upstream in one run (ratios from one script):
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
 * does for every plain request, so phases 1 and 2 measure that path against a plain answer
 * from the upstream directly.
 * The upstream is a minimal fast OpenAI look-alike (vLLM's shapes) on raw sockets in a worker thread; the load generator runs in another worker thread; the router runs
 * in the main thread in `tr` mode with a program id in every request (the real hot path:
 * identity, body rewrite, scheduler events, usage books). Phases alternate direct/router.
 *
 *   node scripts/bench-proxy.ts [--seconds 5] [--requests 5000] [--connections 64]
 *                               [--router tr|default] [--upstream-stream always|as-client]
 *                               [--phases latency,throughput,sse,body]
 *                               [--json out.json] [--cpu-profile out.cpuprofile
 *                               --cpu-profile-phase throughput|latency|sse]
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import { parseArgs } from "node:util";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { Pool } from "undici";

interface LoadCommand {
  kind: "latency" | "throughput" | "sse" | "body";
  /** Phase 4: the body maitred forwards unchanged, or the one it must change. */
  variant?: "kept" | "changed";
  url: string;
  requests: number;
  seconds: number;
  connections: number;
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
const SSE_GROUP = 10;

// ─── upstream worker ───────────────────────────────────────────────────────────────────────
/**
 * A minimal fast upstream: HTTP/1.1 keep-alive over raw sockets with prebuilt answers, so the
 * machine's CPU goes to the router under test rather than to the stand-in backend. It speaks
 * just enough HTTP for undici: Content-Length request bodies, fixed or chunked responses.
 */
function runUpstream(): void {
  const usage = { prompt_tokens: 12, total_tokens: 20, completion_tokens: 8 };
  const answerBody = JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1,
    model: "m",
    choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
    usage,
  });
  const answer = Buffer.from(
    `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(answerBody)}\r\nkeep-alive: timeout=30\r\n\r\n${answerBody}`,
  );
  const metricsBody =
    'vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="10000000"} 1.0\nvllm:num_requests_running{engine="0"} 0\n';
  const metrics = Buffer.from(
    `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${metricsBody.length}\r\n\r\n${metricsBody}`,
  );
  const frame = (text: string) =>
    Buffer.from(`${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`);
  const sseHead = Buffer.from(
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
  );
  const chunk = frame(
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "tok" }, finish_reason: null }] })}\n\n`,
  );
  const group = Buffer.concat(Array.from({ length: SSE_GROUP }, () => chunk));
  const tail = Buffer.concat([
    frame(
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage })}\n\ndata: [DONE]\n\n`,
    ),
    Buffer.from("0\r\n\r\n"),
  ]);

  // A short streamed answer (the plain answer's 8 tokens) for streamed small requests: what
  // the router asks for when its client wants a plain answer.
  const shortStream = Buffer.concat([
    sseHead,
    frame(
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }] })}\n\n`,
    ),
    ...Array.from({ length: 7 }, () => chunk),
    frame(
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "ok" }, logprobs: null, finish_reason: "stop" }] })}\n\n`,
    ),
    tail,
  ]);
  const stream = (sock: Socket) => {
    sock.write(sseHead);
    // Events leave in groups, as from a busy engine: the router, not this stand-in, should
    // be what limits the measured rate.
    let i = 0;
    const pump = () => {
      while (i < SSE_CHUNKS) {
        i += SSE_GROUP;
        if (!sock.write(group)) return void sock.once("drain", pump);
      }
      sock.write(tail);
    };
    pump();
  };

  const server = createNetServer((sock) => {
    sock.setNoDelay(true);
    let buf: Buffer = Buffer.alloc(0);
    sock.on("error", () => {});
    sock.on("data", (d: Buffer) => {
      buf = buf.length > 0 ? Buffer.concat([buf, d]) : d;
      for (;;) {
        const headEnd = buf.indexOf("\r\n\r\n");
        if (headEnd < 0) return;
        const head = buf.toString("latin1", 0, headEnd);
        const len = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        const end = headEnd + 4 + len;
        if (buf.length < end) return;
        const body = buf.subarray(headEnd + 4, end);
        buf = buf.subarray(end);
        if (head.startsWith("GET /metrics")) sock.write(metrics);
        else if (!body.includes('"stream":true')) sock.write(answer);
        else if (body.includes(`"max_tokens":${SSE_CHUNKS}`)) stream(sock);
        else sock.write(shortStream);
      }
    });
  });
  server.listen(0, "127.0.0.1", () => {
    parentPort?.postMessage({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  });
}

// ─── load generator worker ─────────────────────────────────────────────────────────────────
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

async function runLoad(cmd: LoadCommand): Promise<Record<string, number>> {
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
        p50_ms: percentile(times, 0.5),
        p99_ms: percentile(times, 0.99),
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
async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      seconds: { type: "string", default: "5" },
      requests: { type: "string", default: "5000" },
      connections: { type: "string", default: "64" },
      router: { type: "string", default: "tr" },
      "upstream-stream": { type: "string", default: "always" },
      json: { type: "string" },
      "cpu-profile": { type: "string" },
      phases: { type: "string", default: "latency,throughput,sse,body" },
      "cpu-profile-phase": { type: "string", default: "throughput" },
    },
  });
  const seconds = Number(args.seconds);
  const requests = Number(args.requests);
  const connections = Number(args.connections);

  const { resolveRouterConfig } = await import("../src/config/load-config.ts");
  const { startRouter } = await import("../src/runtime/service.ts");
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
  const phases = (args.phases as string).split(",") as Array<LoadCommand["kind"]>;
  for (const kind of phases) {
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
  const summary: Record<string, unknown> = { mode: args.router, connections, seconds, requests };
  console.log(
    `maitred proxy overhead (router mode ${args.router}, --upstream-stream ${args["upstream-stream"]}, loopback, ${requests} sequential requests, ${seconds}s load phases)`,
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
