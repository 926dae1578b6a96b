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
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { Pool } from "undici";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { flagError, progress, scriptArgs } from "../src/bench/script-entry.ts";
import { ROUTER_SETTINGS } from "../src/config/router-config.ts";
import { settingOf } from "../src/config/setting.ts";
import { integer, list, listOf, nonNegative, oneOf, positive } from "../src/config/values.ts";
import {
  type CountingUpstream,
  forkVllmLike,
  grouped,
  markdownTable,
  type RouterProcess,
  runTokenLoad,
  startHttpRelay,
  startRouterProcess,
  startTcpRelay,
  tokenRequestBody,
} from "./proxy-bench-kit.ts";
import { API_PATHS, type Api, type UpstreamStats } from "./vllm-like-upstream.ts";

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
const SSE_GROUP = 10;

// ─── upstream worker ───────────────────────────────────────────────────────────────────────
/**
 * A minimal fast upstream: HTTP/1.1 keep-alive over raw sockets with prebuilt answers, so the
 * machine's CPU goes to the router under test rather than to the stand-in backend. It speaks
 * just enough HTTP for undici: Content-Length request bodies, fixed or chunked responses.
 * An answer has `max_tokens` tokens (8 when not given) and leaves in one write, whole; the
 * SSE events it wrote are counted for the `tokens` phase, which asks with a `stats` message.
 */
function runUpstream(): void {
  const stats: UpstreamStats = { requests: 0, events: 0, writes: 0 };
  const usageOf = (n: number) => ({
    prompt_tokens: 12,
    total_tokens: 12 + n,
    completion_tokens: n,
  });
  const answers = new Map<number, Buffer>();
  /** The plain answer of `n` tokens: n - 1 times "tok", then "ok". */
  const answer = (n: number) => {
    let a = answers.get(n);
    if (a) return a;
    const answerBody = JSON.stringify({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: `${"tok".repeat(n - 1)}ok` },
          finish_reason: "stop",
        },
      ],
      usage: usageOf(n),
    });
    a = Buffer.from(
      `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(answerBody)}\r\nkeep-alive: timeout=30\r\n\r\n${answerBody}`,
    );
    answers.set(n, a);
    return a;
  };
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
  const end = Buffer.from("0\r\n\r\n");
  const tail = (n: number, usage: boolean) =>
    Buffer.concat([
      frame(
        usage
          ? `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: usageOf(n) })}\n\ndata: [DONE]\n\n`
          : "data: [DONE]\n\n",
      ),
      end,
    ]);
  const longTail = tail(SSE_CHUNKS, true);

  // A short streamed answer of n tokens (8 for the small plain requests: what the router asks
  // for when its client wants a plain answer), usage and [DONE] included, in one buffer.
  const shortStreams = new Map<string, Buffer>();
  const shortStream = (n: number, usage: boolean) => {
    const key = `${n}/${usage}`;
    let s = shortStreams.get(key);
    if (s) return s;
    s = Buffer.concat([
      sseHead,
      frame(
        `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }] })}\n\n`,
      ),
      ...Array.from({ length: n - 1 }, () => chunk),
      frame(
        `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "ok" }, logprobs: null, finish_reason: "stop" }] })}\n\n`,
      ),
      tail(n, usage),
    ]);
    shortStreams.set(key, s);
    return s;
  };
  const stream = (sock: Socket) => {
    sock.write(sseHead);
    stats.events += SSE_CHUNKS + 2;
    // Events leave in groups, as from a busy engine: the router, not this stand-in, should
    // be what limits the measured rate.
    let i = 0;
    const pump = () => {
      while (i < SSE_CHUNKS) {
        i += SSE_GROUP;
        stats.writes++;
        if (!sock.write(group)) return void sock.once("drain", pump);
      }
      stats.writes++;
      sock.write(longTail);
    };
    pump();
  };
  const MAX_TOKENS = Buffer.from('"max_tokens":');
  const maxTokensOf = (body: Buffer) => {
    let i = body.indexOf(MAX_TOKENS);
    if (i < 0) return 8;
    let n = 0;
    for (i += MAX_TOKENS.length; body[i] >= 0x30 && body[i] <= 0x39; i++)
      n = n * 10 + body[i] - 0x30;
    return Math.max(1, n);
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
        if (head.startsWith("GET /metrics")) {
          sock.write(metrics);
          continue;
        }
        stats.requests++;
        const n = maxTokensOf(body);
        if (!body.includes('"stream":true')) {
          stats.writes++;
          sock.write(answer(n));
        } else if (n === SSE_CHUNKS) stream(sock);
        else {
          const usage = body.includes('"include_usage":true');
          stats.events += n + (usage ? 3 : 2);
          stats.writes++;
          sock.write(shortStream(n, usage));
        }
      }
    });
  });
  server.listen(0, "127.0.0.1", () => {
    parentPort?.postMessage({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  });
  parentPort?.on("message", (m: { type?: string }) => {
    if (m.type === "stats") parentPort?.postMessage({ stats: { ...stats } });
  });
}

// ─── load generator worker ─────────────────────────────────────────────────────────────────
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

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

// ─── tokens phase: router CPU per request and per event, by answer length ──────────────────
/** One row of the tokens table: a client kind and answer length at a number of connections. */
interface TokenCase {
  api: Api;
  stream: boolean;
  tokens: number;
  connections: number;
}

interface TokenRow extends TokenCase {
  upstream: string;
  direct_rps: number;
  router_rps: number;
  /** Router CPU seconds over its run, read from its process. */
  router_cpu_s: number;
  router_seconds: number;
  /** Requests completed through the router and what the upstream counted for them. */
  requests: number;
  events: number;
  writes: number;
  cpu_us_per_request: number;
  /** null when the upstream wrote no event (a plain answer relayed as it came). */
  cpu_us_per_event: number | null;
  /** The same load through the bare TCP relay (tcp-relay.ts): its CPU per request and event. */
  relay_cpu_us_per_request: number;
  relay_cpu_us_per_event: number | null;
  /** SSE events the upstream wrote per request through the relay (no usage event added). */
  relay_events_per_request: number;
  /** The same load through the bare HTTP relay (http-relay.ts): Node's server and undici. */
  http_relay_cpu_us_per_request: number;
  http_relay_cpu_us_per_event: number | null;
  http_relay_events_per_request: number;
}

type Load = (
  cmd: Omit<LoadCommand, "requests" | "seconds" | "connections"> & Partial<LoadCommand>,
) => Promise<Record<string, number>>;

/** Plain and streamed clients at 4, 64 and 512 tokens; small plain answers also at 64 connections. */
function tokenCases(connections: number, apis: Api[]): TokenCase[] {
  const cases = [
    { stream: false, tokens: 4, connections },
    { stream: false, tokens: 4, connections: 64 },
    { stream: false, tokens: 64, connections },
    { stream: false, tokens: 512, connections },
    { stream: true, tokens: 4, connections },
    { stream: true, tokens: 64, connections },
    { stream: true, tokens: 512, connections },
  ];
  // Each case once per API, one after the other, so that ratios between APIs come from runs
  // close in time.
  return cases.flatMap((c) => apis.map((api) => ({ api, ...c })));
}

/**
 * What the client gets through the router is what it gets directly: the same text in a plain
 * answer (rebuilt from the stream) with the usage of `tokens` tokens, and the same number of
 * SSE events in a stream (maitred adds the usage event the client did not ask for upstream and
 * takes it out again). A broken relay would otherwise show up as a fast one.
 */
async function checkAnswers(direct: string, router: string, api: Api, tokens = 4): Promise<void> {
  const ask = async (url: string, stream: boolean) => {
    const res = await fetch(`${url}${API_PATHS[api]}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: tokenRequestBody("check", stream, tokens, api),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${text}`);
    return text;
  };
  type Plain = {
    choices?: { message?: { content?: string } }[];
    content?: { text?: string }[];
    output?: { content?: { text?: string }[] }[];
    usage?: Record<string, number>;
  };
  const d = JSON.parse(await ask(direct, false)) as Plain;
  const r = JSON.parse(await ask(router, false)) as Plain;
  const text = (p: Plain) =>
    p.choices?.[0]?.message?.content ?? p.content?.[0]?.text ?? p.output?.[0]?.content?.[0]?.text;
  const completion = (p: Plain) => p.usage?.completion_tokens ?? p.usage?.output_tokens;
  if (text(r) !== text(d) || completion(r) !== tokens) {
    throw new Error(`plain answer through the router differs: ${JSON.stringify(r)}`);
  }
  const events = (body: string) =>
    body.split("\n\n").filter((e) => e.startsWith("data:") || e.startsWith("event:")).length;
  const ds = events(await ask(direct, true));
  const rs = events(await ask(router, true));
  if (ds !== rs) throw new Error(`stream through the router has ${rs} events, directly ${ds}`);
}

/**
 * The tokens table for one upstream: `maitred serve` started in front of it as its own
 * process, the answers checked, both paths warmed, then per case the upstream directly and
 * through the router, the router's CPU and the upstream's counters read around the router run.
 */
async function measureTokens(
  name: string,
  upstream: CountingUpstream,
  routerArgs: string[],
  load: Load,
  cases: TokenCase[],
  seconds: number,
  routerProfileDir: string | undefined,
): Promise<TokenRow[]> {
  const router: RouterProcess = await startRouterProcess(
    ["--backends", upstream.url, ...routerArgs],
    routerProfileDir,
  );
  const relay = await startTcpRelay(upstream.url);
  const httpRelay = await startHttpRelay(upstream.url);
  /** CPU seconds of `p` and the upstream's counters over one load through it. */
  const measured = async (p: RouterProcess, c: TokenCase) => {
    const s0: UpstreamStats = await upstream.stats();
    const cpu0 = p.cpuSeconds();
    const result = await load({ kind: "tokens", url: p.url, ...c, seconds });
    const cpu = p.cpuSeconds() - cpu0;
    const s1 = await upstream.stats();
    const requests = s1.requests - s0.requests;
    if (requests !== result.n)
      throw new Error(
        `${name}: the upstream answered ${requests} requests, the client read ${result.n}`,
      );
    return { result, cpu, requests, events: s1.events - s0.events, writes: s1.writes - s0.writes };
  };
  try {
    const apis = [...new Set(cases.map((c) => c.api))];
    for (const api of apis) await checkAnswers(upstream.url, router.url, api);
    for (const url of [upstream.url, router.url, relay.url, httpRelay.url])
      for (const stream of [false, true])
        for (const api of apis)
          await load({ kind: "tokens", url, stream, api, tokens: 64, connections: 16, seconds: 1 });
    const rows: TokenRow[] = [];
    for (const [i, c] of cases.entries()) {
      progress(
        `  ${name} case ${i + 1}/${cases.length}: ${c.api} ${c.stream ? "streamed" : "plain"}, ${c.tokens} tokens, ${c.connections} connections`,
      );
      const direct = await load({ kind: "tokens", url: upstream.url, ...c, seconds });
      const via = await measured(router, c);
      const bare = await measured(relay, c);
      const http = await measured(httpRelay, c);
      rows.push({
        upstream: name,
        ...c,
        direct_rps: direct.n / direct.seconds,
        router_rps: via.result.n / via.result.seconds,
        router_cpu_s: via.cpu,
        router_seconds: via.result.seconds,
        requests: via.requests,
        events: via.events,
        writes: via.writes,
        cpu_us_per_request: (via.cpu / via.requests) * 1e6,
        cpu_us_per_event: via.events > 0 ? (via.cpu / via.events) * 1e6 : null,
        relay_cpu_us_per_request: (bare.cpu / bare.requests) * 1e6,
        relay_cpu_us_per_event: bare.events > 0 ? (bare.cpu / bare.events) * 1e6 : null,
        relay_events_per_request: bare.events / bare.requests,
        http_relay_cpu_us_per_request: (http.cpu / http.requests) * 1e6,
        http_relay_cpu_us_per_event: http.events > 0 ? (http.cpu / http.events) * 1e6 : null,
        http_relay_events_per_request: http.events / http.requests,
      });
    }
    return rows;
  } finally {
    await router.close();
    await relay.close();
    await httpRelay.close();
  }
}

function tokensTable(rows: TokenRow[]): string {
  return markdownTable(
    [
      "upstream",
      "api",
      "client",
      "tokens",
      "connections",
      "direct req/s",
      "maitred req/s",
      "÷ direct",
      "**router CPU µs/request**",
      "**router CPU µs/event**",
      "TCP relay µs/request",
      "TCP relay µs/event",
      "HTTP relay µs/request",
      "HTTP relay µs/event",
      "events/request",
      "upstream writes/request",
      "router CPU busy",
    ],
    rows.map((r) => [
      `\`${r.upstream}\``,
      r.api,
      r.stream ? "streamed" : "plain",
      String(r.tokens),
      String(r.connections),
      grouped(r.direct_rps),
      grouped(r.router_rps),
      `${(r.router_rps / r.direct_rps).toFixed(2)}×`,
      `**${grouped(r.cpu_us_per_request, 1)}**`,
      r.cpu_us_per_event === null ? "–" : `**${r.cpu_us_per_event.toFixed(2)}**`,
      grouped(r.relay_cpu_us_per_request, 1),
      r.relay_cpu_us_per_event === null ? "–" : r.relay_cpu_us_per_event.toFixed(2),
      grouped(r.http_relay_cpu_us_per_request, 1),
      r.http_relay_cpu_us_per_event === null ? "–" : r.http_relay_cpu_us_per_event.toFixed(2),
      (r.events / r.requests).toFixed(0),
      (r.writes / r.requests).toFixed(0),
      `${Math.round((r.router_cpu_s / r.router_seconds) * 100)} %`,
    ]),
    3,
  );
}

/**
 * What one more token costs the router, per upstream and client kind: the CPU per request at
 * 512 tokens less that at 64, over the 448 events between; the per-request costs (parsing the
 * request, the scheduler, the access line) cancel out.
 */
function marginalLines(rows: TokenRow[]): string {
  const out: string[] = [];
  for (const upstream of new Set(rows.map((r) => r.upstream)))
    for (const api of new Set(rows.map((r) => r.api))) {
      const parts: string[] = [];
      for (const stream of [false, true]) {
        const at = (tokens: number) =>
          rows.find(
            (r) =>
              r.upstream === upstream &&
              r.api === api &&
              r.stream === stream &&
              r.tokens === tokens,
          );
        const a = at(64);
        const b = at(512);
        if (!a || !b) continue;
        const between = b.events / b.requests - a.events / a.requests;
        const perEvent = (b.cpu_us_per_request - a.cpu_us_per_request) / between;
        parts.push(`${stream ? "streamed" : "plain"} **${perEvent.toFixed(2)} µs**`);
        // A plain answer passes the relay as one body, so only its streams say what an event costs.
        if (stream) {
          const bare =
            (b.relay_cpu_us_per_request - a.relay_cpu_us_per_request) /
            (b.relay_events_per_request - a.relay_events_per_request);
          const http =
            (b.http_relay_cpu_us_per_request - a.http_relay_cpu_us_per_request) /
            (b.http_relay_events_per_request - a.http_relay_events_per_request);
          parts.push(
            `the bare TCP relay streamed ${bare.toFixed(2)} µs, the bare HTTP relay ${http.toFixed(2)} µs`,
          );
        }
      }
      if (parts.length > 0) out.push(`- \`${upstream}\`, ${api}: ${parts.join(", ")}`);
    }
  return out.length === 0
    ? ""
    : `Router CPU per additional event (512 tokens less 64, per event between):\n${out.join("\n")}`;
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
    json: { arg: "<file>", description: "also write the figures as JSON" },
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
