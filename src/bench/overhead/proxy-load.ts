/**
 * The load `bench:proxy` drives, from a worker thread of its own (proxy-worker.ts) so that the
 * load's CPU is never the router's: one command at a time, closed-loop, against a URL that is
 * either the upstream directly or the router in front of it. The `tokens` phase's load is
 * proxy-bench-kit.ts's `runTokenLoad`; the others are here.
 */
import { Pool } from "undici";
import { percentile } from "../percentile.ts";
import type { Api } from "../upstream/upstream-request.ts";
import { runTokenLoad } from "./proxy-bench-kit.ts";

export type LoadKind = "latency" | "throughput" | "sse" | "body" | "tokens";

export interface LoadCommand {
  kind: LoadKind;
  /** The body phase: the body maitred forwards unchanged, or the one it must change. */
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

/** What a load counted: requests, percentiles, rates, by name (`n`, `p50_ms`, `rps`, …). */
export type LoadResult = Record<string, number>;

/** Chunks per SSE stream of the sse phase; the fast upstream writes them 10 at a time. */
export const SSE_CHUNKS = 2000;
/** Concurrent streams of the sse phase. */
const SSE_STREAMS = 4;

/** OpenAI-style chat request as agent harnesses send it; `program_id` is maitred's field. */
export const smallBody = (programId: string, stream: boolean) =>
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
export function agentMessages(): unknown[] {
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

/**
 * The body phase's bodies: the same conversation, forwarded as it is (program id in a header,
 * usage asked for) or changed by maitred (program id in the body, no usage asked for).
 */
export function largeBody(variant: "kept" | "changed", messages: unknown[]): string {
  const common = { model: "m", messages, max_tokens: 8, stream: true };
  return JSON.stringify(
    variant === "kept"
      ? { ...common, stream_options: { include_usage: true } }
      : { ...common, program_id: "agent-large" },
  );
}

/** Requests of the body phase: a tenth of the latency phase's, at least 50. */
export const bodyRequests = (requests: number) => Math.max(50, Math.round(requests / 10));

/** Runs one command to its end. */
export async function runLoad(cmd: LoadCommand): Promise<LoadResult> {
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
  try {
    if (cmd.kind === "latency" || cmd.kind === "body") return await sequential(pool, cmd);
    if (cmd.kind === "throughput") return await throughput(pool, cmd);
    return await sse(pool, cmd.seconds);
  } finally {
    await pool.close();
  }
}

const HEADERS = { "content-type": "application/json" };

async function call(pool: Pool, body: string, headers: Record<string, string> = HEADERS) {
  const res = await pool.request({ method: "POST", path: "/v1/chat/completions", headers, body });
  await res.body.arrayBuffer();
  if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
}

/** Latency and body phases: requests one after the other, their p50 and p99. */
async function sequential(pool: Pool, cmd: LoadCommand): Promise<LoadResult> {
  const times: number[] = [];
  const large = cmd.kind === "body";
  const b = large
    ? largeBody(cmd.variant ?? "kept", agentMessages())
    : smallBody("latency-0", false);
  const h =
    large && cmd.variant === "kept" ? { ...HEADERS, "x-program-id": "agent-large" } : HEADERS;
  const n = large ? bodyRequests(cmd.requests) : cmd.requests;
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await call(pool, b, h);
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

/** Throughput phase: small plain requests from every connection for `seconds`. */
async function throughput(pool: Pool, cmd: LoadCommand): Promise<LoadResult> {
  const bodies = Array.from({ length: cmd.connections }, (_, i) => smallBody(`agent-${i}`, false));
  let count = 0;
  const end = performance.now() + cmd.seconds * 1000;
  await Promise.all(
    bodies.map(async (b) => {
      while (performance.now() < end) {
        await call(pool, b);
        count++;
      }
    }),
  );
  return { rps: count / cmd.seconds, n: count };
}

/** SSE phase: a few concurrent streams, each read to the end; chunks per second overall. */
async function sse(pool: Pool, seconds: number): Promise<LoadResult> {
  let chunks = 0;
  let bytes = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: SSE_STREAMS }, async (_, i) => {
      const b = smallBody(`stream-${i}`, true);
      while (performance.now() < end) {
        const res = await pool.request({
          method: "POST",
          path: "/v1/chat/completions",
          headers: HEADERS,
          body: b,
        });
        for await (const part of res.body) bytes += (part as Buffer).length;
        chunks += SSE_CHUNKS;
      }
    }),
  );
  const secs = (performance.now() - started) / 1000;
  return { chunks_per_s: chunks / secs, mb_per_s: bytes / secs / 1e6 };
}
