/**
 * Where the prompt tokens of a live run came from, as the engines count them: GPU prefix hits,
 * loads from a host KV tier, and tokens prefilled. A client cannot tell the first two apart
 * (vLLM's `cached_tokens` counts both), so `bench compare` reads its simulated backends'
 * `/metrics` at the start of the steady window and at the end of the run and reports the
 * difference. A backend that does not answer, or lacks a counter, makes the figure unknown
 * (null), never zero.
 */
import { parsePrometheusText } from "../backends/prometheus-text.ts";
import type { Clock, TimerHandle } from "../runtime/clock.ts";
import { readMetrics } from "./kv-sampler.ts";

export interface EnginePromptTokens {
  /** Prompt tokens the engines admitted, re-admissions after preemption included. */
  queried: number;
  gpu_hits: number;
  /** Loaded from host memory instead of computed (0 without a tier). */
  host_loaded: number;
  /** Computed at admission: neither GPU hits nor host loads. */
  prefilled: number;
  /** Seconds the host links spent loading KV back (0 without a tier). */
  host_load_s: number;
}

interface Counters {
  queries: number;
  hits: number;
  hostHits: number;
  loadS: number;
}

const NAMES = [
  "vllm:prefix_cache_queries_total",
  "vllm:prefix_cache_hits_total",
  "vllm:external_prefix_cache_hits_total",
  "vllm:kv_offload_total_time_total",
];

/**
 * vLLM's prefix-cache counters, summed over data-parallel ranks; null without them. An engine
 * with no host tier exports no external or offload series: its loads are 0.
 */
export function enginePromptCounters(text: string): Counters | null {
  const families = parsePrometheusText(text, (name) => NAMES.includes(name));
  const sum = (name: string, keep: (labels: Record<string, string>) => boolean = () => true) =>
    (families.get(name) ?? []).filter((s) => keep(s.labels)).reduce((a, s) => a + s.value, 0);
  if (
    !families.has("vllm:prefix_cache_queries_total") ||
    !families.has("vllm:prefix_cache_hits_total")
  )
    return null;
  const counters = {
    queries: sum("vllm:prefix_cache_queries_total"),
    hits: sum("vllm:prefix_cache_hits_total"),
    hostHits: sum("vllm:external_prefix_cache_hits_total"),
    loadS: sum("vllm:kv_offload_total_time_total", (l) => l.transfer_type === "CPU_to_GPU"),
  };
  return Object.values(counters).every(Number.isFinite) ? counters : null;
}

async function readAll(urls: readonly string[]): Promise<Counters | null> {
  const read = await Promise.all(
    urls.map(async (url) => {
      try {
        return enginePromptCounters(await readMetrics(url, AbortSignal.timeout(5000)));
      } catch {
        return null;
      }
    }),
  );
  if (read.some((c) => c === null)) return null;
  return (read as Counters[]).reduce((a, c) => ({
    queries: a.queries + c.queries,
    hits: a.hits + c.hits,
    hostHits: a.hostHits + c.hostHits,
    loadS: a.loadS + c.loadS,
  }));
}

/** The difference between two readings, as the report shows it. */
export function promptTokensBetween(start: Counters, end: Counters): EnginePromptTokens {
  const queried = end.queries - start.queries;
  const gpu = end.hits - start.hits;
  const host = end.hostHits - start.hostHits;
  return {
    queried,
    gpu_hits: gpu,
    host_loaded: host,
    prefilled: queried - gpu - host,
    host_load_s: Math.round((end.loadS - start.loadS) * 1000) / 1000,
  };
}

/**
 * Reads `urls` once `warmupMs` after `start()` (the steady window's start; at once without a
 * warm-up) and again at `stop()`.
 */
export function startEngineWindow(urls: readonly string[], clock: Clock, warmupMs: number) {
  let first: Promise<Counters | null> | null = null;
  let timer: TimerHandle | null = null;
  return {
    start() {
      if (warmupMs <= 0) first = readAll(urls);
      else
        timer = clock.setTimeout(() => {
          first = readAll(urls);
        }, warmupMs);
    },
    /** The window's figures; null when a reading failed or the run ended in its warm-up. */
    async stop(): Promise<EnginePromptTokens | null> {
      timer?.cancel();
      const start = await first;
      if (start === null) return null;
      const end = await readAll(urls);
      return end === null ? null : promptTokensBetween(start, end);
    },
  };
}
