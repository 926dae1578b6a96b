/**
 * KV usage over a live run, read once a second from `/metrics` (`bench --html`, `bench compare
 * --html`): what the HTML report charts per backend. `bench compare` reads each simulated
 * backend; `bench` reads its target, which reports one engine (vLLM, SGLang) or, for a maitred
 * router, every backend it polls. A backend that does not answer, or does not export the
 * figure, is a gap (null), not an empty cache.
 */
import { parsePrometheusText } from "../backends/prometheus-text.ts";
import { type Clock, type TimerHandle, wallClock } from "../runtime/clock.ts";

export interface KvSeries {
  t_s: number[];
  backends: {
    id: string;
    kv_usage: (number | null)[];
    /** Share of the host KV tier in use (0..1), when the run knows it (the simulator does). */
    host_usage?: (number | null)[];
  }[];
}

const EVERY_MS = 1000;

/** The engine gauges of KV usage (0..1), by the server that exports them. */
const ENGINE_GAUGES = [
  "vllm:kv_cache_usage_perc",
  "vllm:gpu_cache_usage_perc",
  "sglang:token_usage",
];
/** A maitred router's own figure for each backend it polls (label `backend`). */
const ROUTER_GAUGE = "maitred_engine_kv_usage_ratio";

const finite = (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? v : null);

/**
 * KV usage by backend from one `/metrics` text: a router's figure per backend, else the
 * engine's own gauge under `id` (the mean over its data-parallel ranks); empty when neither.
 */
export function kvUsageFromMetrics(text: string, id: string): Map<string, number | null> {
  const families = parsePrometheusText(
    text,
    (name) => name === ROUTER_GAUGE || ENGINE_GAUGES.includes(name),
  );
  const router = families.get(ROUTER_GAUGE);
  if (router !== undefined && router.length > 0) {
    return new Map(router.map((s) => [s.labels.backend ?? id, finite(s.value)]));
  }
  for (const name of ENGINE_GAUGES) {
    // The mean over the engine's data-parallel ranks that report a figure.
    const values = (families.get(name) ?? []).map((s) => s.value).filter(Number.isFinite);
    if (values.length === 0) continue;
    return new Map([[id, values.reduce((sum, v) => sum + v, 0) / values.length]]);
  }
  return new Map();
}

/** A server's `/metrics` text; throws when it does not answer 200. */
export async function readMetrics(url: string, signal: AbortSignal): Promise<string> {
  const res = await fetch(`${url}/metrics`, { signal });
  if (!res.ok) throw new Error(`${url}/metrics answered ${res.status}`);
  return res.text();
}

/**
 * Samples `urls`' `/metrics` once a second until stopped. Each backend found keeps its place;
 * one found late has gaps before it appeared.
 */
export function startKvSampler(urls: readonly string[], clock: Clock = wallClock) {
  const series: KvSeries = { t_s: [], backends: [] };
  const byId = new Map<string, (number | null)[]>();
  const seriesOf = (id: string) => {
    let values = byId.get(id);
    if (values === undefined) {
      values = series.t_s.map(() => null);
      byId.set(id, values);
      series.backends.push({ id, kv_usage: values });
    }
    return values;
  };
  // Every URL has a series from the start, even one that never answers.
  for (const url of urls) seriesOf(url);
  const start = clock.now();
  let timer: TimerHandle | null = null;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const sample = async () => {
    const t = (clock.now() - start) / 1000;
    const read = await Promise.all(
      urls.map((url) =>
        readMetrics(url, AbortSignal.timeout(EVERY_MS)).then(
          (text) => kvUsageFromMetrics(text, url),
          () => new Map<string, number | null>(),
        ),
      ),
    );
    const found = new Map<string, number | null>();
    for (const usage of read) for (const [id, v] of usage) found.set(id, v);
    for (const id of found.keys()) seriesOf(id);
    series.t_s.push(t);
    for (const b of series.backends) b.kv_usage.push(found.get(b.id) ?? null);
  };
  const loop = () => {
    if (stopped) return;
    running = sample().finally(() => {
      if (!stopped) timer = clock.setTimeout(loop, EVERY_MS);
    });
  };
  loop();
  return {
    async stop(): Promise<KvSeries> {
      stopped = true;
      timer?.cancel();
      await running;
      // A router reports its backends, not itself: a URL that only ever named other backends
      // has no series of its own.
      const named = series.backends.some((b) => !urls.includes(b.id));
      if (named) {
        series.backends = series.backends.filter(
          (b) => !urls.includes(b.id) || b.kv_usage.some((v) => v !== null),
        );
      }
      return series;
    },
  };
}
