/**
 * What the proxy benchmark (bench-proxy.ts) needs to measure maitred as users run it, each
 * piece in a process of its own: `maitred serve` as a child process whose CPU time is read
 * from the kernel (/proc), the vLLM-like upstream (vllm-like-upstream.ts) as a child process
 * that reports how many SSE events it wrote, and the closed-loop load that drives either.
 * CPU read from the process is what one request costs the router whatever else the machine
 * is doing; requests per second are not, on a machine shared with other work.
 */
import { execFileSync, fork, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { startMaitredProcess, stopProcess } from "../src/bench/maitred-process.ts";
import { API_PATHS, type Api, DEFAULT_MODEL, type UpstreamStats } from "./vllm-like-upstream.ts";

// ─── CPU time of another process ────────────────────────────────────────────────────────────
/** Kernel clock ticks per second, the unit of utime and stime in /proc/<pid>/stat. */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * User + system CPU seconds of process `pid` so far, all its threads (JIT, GC, libuv's pool)
 * included: fields 14 and 15 of /proc/<pid>/stat, counted after the command name, which is
 * in parentheses and may hold spaces. Its resolution is one clock tick (10 ms), so a phase
 * should give the process a second or more of work.
 */
export function processCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // rest[0] is field 3 (state), so utime (14) and stime (15) are rest[11] and rest[12].
  return (Number(rest[11]) + Number(rest[12])) / CLOCK_TICKS;
}

// ─── maitred serve as a child process ───────────────────────────────────────────────────────
export interface RouterProcess {
  url: string;
  pid: number;
  /** CPU seconds the router process has used so far. */
  cpuSeconds(): number;
  close(): Promise<void>;
}

/**
 * `maitred serve <args>` on a free loopback port, as users start it (log level info, access
 * log on, unless `args` say otherwise); ready once it logs its listening line. With
 * `cpuProfileDir`, Node writes the process's CPU profile there when it exits.
 */
export async function startRouterProcess(
  args: readonly string[],
  cpuProfileDir?: string,
): Promise<RouterProcess> {
  // Through NODE_OPTIONS (kept as the user set it, the directory quoted) because the process is
  // started by the same launcher as every other maitred process, which passes no Node flags.
  const profiling = `--cpu-prof --cpu-prof-dir=${JSON.stringify(cpuProfileDir)}`;
  const env =
    cpuProfileDir === undefined
      ? process.env
      : { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} ${profiling}`.trim() };
  const p = await startMaitredProcess(
    ["serve", "--host", "127.0.0.1", "--port", "0", "--log-level", "info", ...args],
    "maitred listening",
    env,
  );
  return { ...p, cpuSeconds: () => processCpuSeconds(p.pid) };
}

const TCP_RELAY = fileURLToPath(new URL("./tcp-relay.ts", import.meta.url));
const HTTP_RELAY = fileURLToPath(new URL("./http-relay.ts", import.meta.url));

/** tcp-relay.ts in front of `upstreamUrl`, in its own process: the floor of any Node proxy. */
export function startTcpRelay(upstreamUrl: string): Promise<RouterProcess> {
  return startRelay(TCP_RELAY, new URL(upstreamUrl).host, "TCP relay");
}

/**
 * http-relay.ts in front of `upstreamUrl`, in its own process: the floor of a proxy built on
 * Node's HTTP server and undici, as maitred is.
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

// ─── upstreams ──────────────────────────────────────────────────────────────────────────────
/** An upstream the benchmark can ask how many events it wrote. */
export interface CountingUpstream {
  url: string;
  stats(): Promise<UpstreamStats>;
  close(): Promise<void>;
}

const UPSTREAM = fileURLToPath(new URL("./vllm-like-upstream.ts", import.meta.url));

/** vllm-like-upstream.ts in a child process; its counters are asked for over IPC. */
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
 * requests still out then are finished and counted.
 */
export async function runTokenLoad(load: TokenLoad): Promise<TokenLoadResult> {
  const pool = new Pool(load.url, { connections: load.connections, pipelining: 1 });
  const headers = { "content-type": "application/json" };
  let n = 0;
  let bytes = 0;
  const started = performance.now();
  const end = started + load.seconds * 1000;
  try {
    await Promise.all(
      Array.from({ length: load.connections }, async (_, i) => {
        const body = tokenRequestBody(`agent-${i}`, load.stream, load.tokens, load.api);
        while (performance.now() < end) {
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

// ─── output ─────────────────────────────────────────────────────────────────────────────────
/** A markdown table; columns after the first `leftColumns` are right-aligned. */
export function markdownTable(head: string[], rows: string[][], leftColumns = 1): string {
  const align = head.map((_, i) => (i < leftColumns ? "---" : "---:"));
  return [head, align, ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
}

/** 12,345 */
export const grouped = (x: number, digits = 0) =>
  x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
