/**
 * KV usage over a live run, read from the simulated backends' own `/metrics` once a second
 * (`bench compare --html`): what the HTML report charts per backend. A backend that does not
 * answer, or does not export the gauge, is a gap (null), not an empty cache.
 */
import { createVllmMetricsClient } from "../backends/vllm-metrics-client.ts";
import { type Clock, type TimerHandle, wallClock } from "../runtime/clock.ts";

export interface KvSeries {
  t_s: number[];
  backends: { id: string; kv_usage: (number | null)[] }[];
}

const EVERY_MS = 1000;

export function startKvSampler(urls: readonly string[], clock: Clock = wallClock) {
  const clients = urls.map((url) =>
    createVllmMetricsClient(url, async (path, signal) => {
      const res = await fetch(`${url}${path}`, { signal });
      return { status: res.status, text: await res.text() };
    }),
  );
  const series: KvSeries = { t_s: [], backends: urls.map((id) => ({ id, kv_usage: [] })) };
  const start = clock.now();
  let timer: TimerHandle | null = null;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  const sample = async () => {
    const t = (clock.now() - start) / 1000;
    const values = await Promise.all(
      clients.map((c) =>
        c.poll(AbortSignal.timeout(EVERY_MS)).then(
          (s) => s.kvUsage,
          () => null,
        ),
      ),
    );
    series.t_s.push(t);
    for (const [i, v] of values.entries()) series.backends[i]?.kv_usage.push(v);
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
      return series;
    },
  };
}
