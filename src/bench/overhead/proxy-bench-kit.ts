/**
 * What the proxy benchmark (scripts/bench-proxy.ts) needs to measure maitred as users run it,
 * each piece in a process of its own: the bare relays it measures beside the router, the
 * vLLM-like upstream (src/bench/upstream) as a child process that reports how many SSE
 * events it wrote, and the closed-loop load that drives either. The router itself is
 * `startServeProcess` (maitred-process.ts); CPU time is read from /proc (process-stats.ts).
 */
import { fork, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { type RouterProcess, stopProcess } from "../maitred-process.ts";
import { processCpuSeconds } from "../process-stats.ts";
import { API_PATHS, type Api, DEFAULT_MODEL } from "../upstream/upstream-request.ts";
import type { UpstreamStats } from "../upstream/vllm-like-server.ts";

// The relays and the upstream run as the scripts they are (entries in scripts/, started as
// processes, never imported), so each has a process of its own whose CPU time is its own.
const TCP_RELAY = fileURLToPath(new URL("../../../scripts/tcp-relay.ts", import.meta.url));
const HTTP_RELAY = fileURLToPath(new URL("../../../scripts/http-relay.ts", import.meta.url));
const UPSTREAM = fileURLToPath(new URL("../../../scripts/vllm-like-upstream.ts", import.meta.url));

/** scripts/tcp-relay.ts in front of `upstreamUrl`, in its own process: the floor of any Node proxy. */
export function startTcpRelay(upstreamUrl: string): Promise<RouterProcess> {
  return startRelay(TCP_RELAY, new URL(upstreamUrl).host, "TCP relay");
}

/**
 * scripts/http-relay.ts in front of `upstreamUrl`, in its own process: the floor of a proxy
 * built on Node's HTTP server and undici, as maitred is.
 */
export function startHttpRelay(upstreamUrl: string): Promise<RouterProcess> {
  return startRelay(HTTP_RELAY, upstreamUrl, "HTTP relay");
}

function startRelay(script: string, arg: string, name: string): Promise<RouterProcess> {
  const child = spawn(process.execPath, [script, arg], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`${name} exited (${code})`)));
    child.stdout.once("data", (line: Buffer) => {
      const { url } = JSON.parse(line.toString()) as { url: string };
      const pid = child.pid as number;
      resolve({
        url,
        pid,
        cpuSeconds: () => processCpuSeconds(pid),
        close: () => stopProcess(child),
      });
    });
  });
}

/** An upstream the benchmark can ask how many events it wrote. */
export interface CountingUpstream {
  url: string;
  stats(): Promise<UpstreamStats>;
  close(): Promise<void>;
}

/** scripts/vllm-like-upstream.ts in a child process; its counters are asked for over IPC. */
export function forkVllmLike(args: readonly string[]): Promise<CountingUpstream> {
  const child = fork(UPSTREAM, [...args], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`vLLM-like upstream exited (${code})`)));
    child.once("message", (m: { url: string }) =>
      resolve({
        url: m.url,
        stats: () =>
          new Promise((done) => {
            child.once("message", (r: { stats: UpstreamStats }) => done(r.stats));
            child.send({ type: "stats" });
          }),
        close: () => stopProcess(child),
      }),
    );
  });
}

// ─── closed-loop load of chat completions with a given answer length ───────────────────────
export interface TokenLoad {
  url: string;
  /** Whether the client asks for a stream. */
  stream: boolean;
  /** max_tokens: the upstreams answer exactly this many tokens. */
  tokens: number;
  connections: number;
  seconds: number;
  /** The API asked (chat completions by default); the program id goes where its clients put it. */
  api?: Api;
}

export interface TokenLoadResult {
  /** Requests completed. */
  n: number;
  /** From the first request sent to the last answer read in full. */
  seconds: number;
  /** Response body bytes read. */
  bytes: number;
}

/** A request as agent harnesses send it, with maitred's `program_id`, one program per loop. */
export const tokenRequestBody = (
  programId: string,
  stream: boolean,
  tokens: number,
  api: Api = "chat",
) => {
  const ask = "Summarise the tool output in one line.";
  if (api === "messages")
    return JSON.stringify({
      model: DEFAULT_MODEL,
      messages: [{ role: "user", content: ask }],
      max_tokens: tokens,
      stream,
      metadata: { user_id: JSON.stringify({ session_id: programId }) },
    });
  if (api === "responses")
    return JSON.stringify({
      model: DEFAULT_MODEL,
      input: [{ type: "message", role: "user", content: ask }],
      max_output_tokens: tokens,
      stream,
      store: false,
      prompt_cache_key: programId,
    });
  return JSON.stringify({
    model: DEFAULT_MODEL,
    messages: [{ role: "user", content: ask }],
    max_tokens: tokens,
    stream,
    program_id: programId,
  });
};

/**
 * `connections` loops, each on its own keep-alive connection, each sending its next request
 * when the previous answer has been read to its end, until `seconds` have passed; the
 * requests still out then are finished and counted. With `requests`, each loop stops after
 * that many instead (what a test runs, so it never depends on how fast the machine is).
 */
export async function runTokenLoad(
  load: TokenLoad & { requests?: number },
): Promise<TokenLoadResult> {
  const pool = new Pool(load.url, { connections: load.connections, pipelining: 1 });
  const headers = { "content-type": "application/json" };
  let n = 0;
  let bytes = 0;
  const started = performance.now();
  const end = started + load.seconds * 1000;
  const more = (sent: number) =>
    load.requests === undefined ? performance.now() < end : sent < load.requests;
  try {
    await Promise.all(
      Array.from({ length: load.connections }, async (_, i) => {
        const body = tokenRequestBody(`agent-${i}`, load.stream, load.tokens, load.api);
        for (let sent = 0; more(sent); sent++) {
          const res = await pool.request({
            method: "POST",
            path: API_PATHS[load.api ?? "chat"],
            headers,
            body,
          });
          for await (const part of res.body) bytes += (part as Buffer).length;
          if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
          n++;
        }
      }),
    );
  } finally {
    await pool.close();
  }
  return { n, seconds: (performance.now() - started) / 1000, bytes };
}
