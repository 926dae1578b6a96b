/**
 * What `bench:proxy` prints around its figures: the lines that say how the tokens phase ran,
 * and the router-in-process phases' lines with the summary they put in the JSON.
 */
import type { PhaseResults } from "./router-phases.ts";

export interface TokensRun {
  /** The command as given, the date of the run. */
  commandLine: string;
  date: string;
  routerArgs: readonly string[];
  seconds: number;
  /** The vLLM-like upstream's engine step, as the flag gives it ("0": every loop turn). */
  intervalMs: string;
  /** Whether the router ran under the CPU profiler. */
  profiled: boolean;
}

/** The lines before the tokens table: the run, what each figure is, a profiler's caveat. */
export function tokensPreamble(r: TokensRun): string[] {
  const step = Number(r.intervalMs) > 0 ? `${r.intervalMs} ms` : "turn of its event loop";
  return [
    `\`${r.commandLine}\`, ${r.date}: \`maitred serve ${r.routerArgs.join(" ")}\` in its own process, load from another, ${r.seconds} s per run; vLLM-like engine steps every ${step}.`,
    "Router CPU: utime + stime of the router process (/proc/<pid>/stat) over its run. Events: SSE events the upstream wrote for those requests (role, tokens, usage, [DONE]). TCP relay: the same load through scripts/tcp-relay.ts, which copies bytes; HTTP relay: through scripts/http-relay.ts, Node's HTTP server and an undici pool with nothing between them, the floor of a proxy built as maitred is. A plain answer passes both relays as one body (they forward the request as it came), so only their streamed rows show what reading every event costs.",
    ...(r.profiled
      ? ["The router ran under the CPU profiler: its CPU figures include the profiler's."]
      : []),
  ];
}

export interface PhasesRun {
  router: string;
  upstreamStream: string;
  requests: number;
  seconds: number;
  connections: number;
}

/** The JSON's figures of the router-in-process phases, each present when its phase ran. */
export interface PhasesSummary {
  latency?: Record<string, number>;
  throughput?: Record<string, number>;
  sse?: Record<string, number>;
  body?: Record<string, number>;
}

const fmt = (x: number, digits = 3) => x.toFixed(digits);

/** The printed lines of the phases that ran (a heading first) and their summary. */
export function phasesReport(
  results: PhaseResults,
  run: PhasesRun,
): { lines: string[]; summary: PhasesSummary } {
  const d = results.direct;
  const r = results.router;
  const summary: PhasesSummary = {};
  const lines = [
    `maitred proxy overhead, fast upstream, router in this process (mode ${run.router}, --upstream-stream ${run.upstreamStream}, loopback, ${run.requests} sequential requests, ${run.seconds}s load phases)`,
  ];
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
    lines.push(
      `  latency p50   direct ${fmt(l.direct_p50_ms)} ms   router ${fmt(l.router_p50_ms)} ms   added ${fmt(l.added_p50_ms)} ms`,
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
    lines.push(
      `  throughput    direct ${fmt(d.throughput.rps, 0)} req/s   router ${fmt(r.throughput.rps, 0)} req/s   (${run.connections} connections)`,
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
    lines.push(
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
    lines.push(
      `  large body    ${fmt(kept.bytes / 1024, 0)} KiB through the router: forwarded as it is ${fmt(kept.p50_ms)} ms p50, changed by maitred ${fmt(changed.p50_ms)} ms p50 (${fmt(changed.p50_ms / kept.p50_ms, 2)}×)`,
    );
  }
  return { lines, summary };
}
