import type { SchedulerCounters, SchedulerSnapshot } from "../core/api.ts";
import type { BackendMetricsSample } from "../core/events.ts";
import { counterDelta, type EngineCounters, engineCounters } from "./engine-probe.ts";
import type { SimBackend } from "./sim-runtime.ts";

/**
 * Engine truth beside the router's view, recorded on every tick: what each engine really did
 * (preemptions, prefix-cache hits, recomputed tokens, KV usage) and what the core believed
 * (its token books, its queue). Counts are taken over the steady window, like steps/min;
 * the per-tick series cover the whole run.
 */

export interface BackendTruth {
  id: string;
  capacity_tokens: number;
  preemptions: number;
  recomputed_tokens: number;
  prefix_cache_queries: number;
  prefix_cache_hits: number;
  prefix_cache_hit_rate: number | null;
  /** Prompt tokens loaded from the host tier instead of computed (0 without one). */
  host_loaded_tokens: number;
  /** Prompt tokens computed at admission: neither GPU prefix hits nor host loads. */
  prefilled_tokens: number;
  /** Seconds the host link spent loading KV back. */
  host_load_s: number;
  prompt_tokens: number;
  generation_tokens: number;
  /** Share of the window the engine spent stepping (1 = never idle). */
  busy_fraction: number | null;
  engine_steps: number;
  kv_usage: { mean: number | null; max: number | null };
}

export interface BackendSeries {
  id: string;
  kv_usage: number[];
  running: number[];
  waiting: number[];
  /** The core's `used` tokens for this backend (its books, not the engine's). */
  router_used_tokens: number[];
  /** The prefix-sharing credit the core derived from this tick's sample. */
  router_shared_tokens: number[];
  /** Share of the host KV tier's blocks in use (0..1); absent without a tier. */
  host_usage?: number[];
}

export interface TruthSeries {
  t_s: number[];
  paused_programs: number[];
  parked_requests: number[];
  /**
   * Tokens the core books for programs between steps (ACTING, room not lent), all backends:
   * room held for programs in a tool call, or done and never released.
   */
  acting_held_tokens: number[];
  backends: BackendSeries[];
}

export interface EngineTruth {
  backends: BackendTruth[];
  /** Core decision counters over the window. */
  scheduler: SchedulerCounters;
  /** Mean of `series.acting_held_tokens` over the window's ticks; null without a tick. */
  acting_held_tokens_mean: number | null;
  series: TruthSeries;
}

export interface TruthRecorder {
  onTick(tS: number, samples: Record<string, BackendMetricsSample>, s: SchedulerSnapshot): void;
  /** Capture the counters at the start of the steady window. */
  markWindowStart(counters: SchedulerCounters): void;
  finish(window: { startS: number; endS: number }, counters: SchedulerCounters): EngineTruth;
}

const round = (v: number, digits: number) => {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
};
const ratio = (a: number, b: number, digits = 4) => (b > 0 ? round(a / b, digits) : null);

function schedulerDelta(end: SchedulerCounters, start: SchedulerCounters): SchedulerCounters {
  const out = { ...end };
  for (const k of Object.keys(out) as (keyof SchedulerCounters)[]) out[k] = end[k] - start[k];
  return out;
}

export function createTruthRecorder(backends: readonly SimBackend[]): TruthRecorder {
  const read = () => backends.map((b) => engineCounters(b.engine.stats()));
  let startCounters: EngineCounters[] = read();
  let startScheduler: SchedulerCounters | null = null;
  const series: TruthSeries = {
    t_s: [],
    paused_programs: [],
    parked_requests: [],
    acting_held_tokens: [],
    backends: backends.map((b) => ({
      id: b.id,
      kv_usage: [],
      running: [],
      waiting: [],
      router_used_tokens: [],
      router_shared_tokens: [],
      ...((b.engine.config.kvOffloadingSize ?? 0) > 0 ? { host_usage: [] } : {}),
    })),
  };

  return {
    onTick(tS, samples, snap) {
      series.t_s.push(round(tS, 3));
      series.paused_programs.push(snap.pausedPrograms);
      series.parked_requests.push(snap.queueLength);
      let held = 0;
      for (const b of snap.backends) held += b.actingTokens;
      series.acting_held_tokens.push(Math.round(held));
      backends.forEach((b, i) => {
        const s = samples[b.id];
        const out = series.backends[i];
        out.kv_usage.push(round(s.kvUsage ?? 0, 4));
        out.running.push(s.running ?? 0);
        out.waiting.push(s.waiting ?? 0);
        out.router_used_tokens.push(Math.round(snap.backends[i].usedTokens));
        out.router_shared_tokens.push(Math.round(snap.backends[i].sharedTokens));
        if (out.host_usage !== undefined) {
          const tier = b.engine.stats().hostTier;
          out.host_usage.push(
            tier && tier.numBlocks > 0 ? round(tier.usedBlocks / tier.numBlocks, 4) : 0,
          );
        }
      });
    },
    markWindowStart(counters) {
      startCounters = read();
      startScheduler = { ...counters };
    },
    finish(window, counters) {
      const end = read();
      const spanS = window.endS - window.startS;
      const inWindow = series.t_s.map((t) => t >= window.startS && t < window.endS);
      const truths = backends.map((b, i): BackendTruth => {
        const d = counterDelta(end[i], startCounters[i]);
        const kv = series.backends[i].kv_usage.filter((_, k) => inWindow[k]);
        return {
          id: b.id,
          capacity_tokens: b.engine.config.blockSize * b.engine.config.numGpuBlocks,
          preemptions: d.preemptions,
          recomputed_tokens: d.recomputedTokens,
          prefix_cache_queries: d.prefixCacheQueries,
          prefix_cache_hits: d.prefixCacheHits,
          prefix_cache_hit_rate: ratio(d.prefixCacheHits, d.prefixCacheQueries),
          host_loaded_tokens: d.hostLoadedTokens,
          prefilled_tokens: d.prefixCacheQueries - d.prefixCacheHits - d.hostLoadedTokens,
          host_load_s: round(d.hostLoadS, 3),
          prompt_tokens: d.promptTokens,
          generation_tokens: d.generationTokens,
          busy_fraction: ratio(d.busyS, spanS),
          engine_steps: d.steps,
          kv_usage: {
            mean: kv.length === 0 ? null : round(kv.reduce((a, v) => a + v, 0) / kv.length, 4),
            max: kv.length === 0 ? null : Math.max(...kv),
          },
        };
      });
      const held = series.acting_held_tokens.filter((_, k) => inWindow[k]);
      return {
        backends: truths,
        acting_held_tokens_mean:
          held.length === 0 ? null : Math.round(held.reduce((a, v) => a + v, 0) / held.length),
        scheduler: schedulerDelta(counters, startScheduler ?? zeroCounters(counters)),
        series,
      };
    },
  };
}

function zeroCounters(like: SchedulerCounters): SchedulerCounters {
  const out = { ...like };
  for (const k of Object.keys(out) as (keyof SchedulerCounters)[]) out[k] = 0;
  return out;
}
