/**
 * The soak's samples, every `--sample-every` seconds: each router's own views (`/programs`,
 * `/backends`) judged by its invariant checker, its RSS and CPU from /proc, its heap and
 * event-loop delay from its `/metrics`; summed over the cells into one `Sample` (chart.ts).
 */
import { parsePrometheusText, sumOf } from "../../backends/prometheus-text.ts";
import type { Sample } from "./chart.ts";
import { type Fleet, procStats, type SoakRouter } from "./fleet.ts";
import type { RouterSample } from "./invariants.ts";
import { CHAT_PATH, type RequestLedger } from "./ledger.ts";
import { noteDrift, onRouter, type SoakState, sinceText, violate } from "./state.ts";

/** `GET /programs`, the fields the checks read. */
type ProgramsView = Record<
  string,
  { status: string; state: string; in_flight: number; paused_since: number | null }
>;
/** `GET /backends`, the field the checks read. */
type BackendsView = Record<string, { used_tokens: number }>;

/** A router's two views as one sample for its checks. */
export function toRouterSample(
  programs: ProgramsView,
  backends: BackendsView,
  atMs: number,
): RouterSample {
  return {
    atMs,
    programs: Object.entries(programs).map(([key, p]) => ({
      key,
      status: p.status,
      state: p.state,
      inFlight: p.in_flight,
      pausedSince: p.paused_since,
    })),
    usedTokens: Object.fromEntries(Object.entries(backends).map(([u, b]) => [u, b.used_tokens])),
  };
}

/** Heap used (MB) and event-loop delay p99 (ms) of a router's `/metrics` text; null if absent. */
export function metricsReading(text: string): { heapMb: number | null; lagMs: number | null } {
  const fams = parsePrometheusText(text);
  const heap = sumOf(fams, "nodejs_heap_size_used_bytes");
  const lag = sumOf(fams, "nodejs_eventloop_lag_p99_seconds");
  return { heapMb: heap === null ? null : heap / 2 ** 20, lagMs: lag === null ? null : lag * 1000 };
}

/** The sum, or null when any part is unknown (a figure of some cells only would mislead). */
export const addOrNull = (xs: readonly (number | null)[]): number | null =>
  xs.some((x) => x === null) ? null : xs.reduce((t: number, x) => t + (x as number), 0);

/** One router's reading in a sample (a cell killed since its views were read reads null). */
export interface RouterReading {
  rssMb: number | null;
  /** Its CPU seconds, its killed processes' included. */
  cpuS: number | null;
  heapMb: number | null;
  lagMs: number | null;
}

export interface SampleParts {
  tS: number;
  /** The routers that were up. */
  readings: readonly RouterReading[];
  /** CPU seconds of the cells down now: what their killed processes used. */
  downCpuS: number;
  livePrograms: number;
  programsSeen: number;
  requests: number;
  cells: Sample["cells"];
}

/** The routers' readings summed; the event-loop delay is the worst router's. */
export function combineSample(p: SampleParts): Sample {
  const cpu = addOrNull(p.readings.map((r) => r.cpuS));
  const lags = p.readings.map((r) => r.lagMs).filter((v): v is number => v !== null);
  return {
    t_s: p.tS,
    rss_mb: addOrNull(p.readings.map((r) => r.rssMb)),
    cpu_s: cpu === null ? null : cpu + p.downCpuS,
    heap_mb: addOrNull(p.readings.map((r) => r.heapMb)),
    lag_p99_ms: lags.length === 0 ? null : Math.max(...lags),
    live_programs: p.livePrograms,
    programs_seen: p.programsSeen,
    requests: p.requests,
    cells: p.cells,
  };
}

export interface Sampler {
  /** Every router's sample, the cells that are down left out. */
  routerSamples(): Promise<{ rt: SoakRouter; s: RouterSample }[]>;
  /** One sample: checked, measured, kept; a failed one is said and skipped. */
  take(): Promise<void>;
}

export function createSampler(
  fleet: Pick<Fleet, "routers">,
  ledger: RequestLedger,
  st: SoakState,
  cells: number,
): Sampler {
  /** A request straight to one router (its own views); one it never answered is given up. */
  async function routerGet(rt: SoakRouter, path: string): Promise<unknown> {
    ledger.count(path);
    try {
      return await (await fetch(`${rt.url}${path}`)).json();
    } catch (err) {
      ledger.unanswered(path);
      throw err;
    }
  }
  async function routerSample(rt: SoakRouter): Promise<RouterSample> {
    const programs = (await routerGet(rt, "/programs")) as ProgramsView;
    const backends = (await routerGet(rt, "/backends")) as BackendsView;
    return toRouterSample(programs, backends, Date.now());
  }
  const routerSamples = () =>
    Promise.all(
      fleet.routers.filter((rt) => rt.up).map(async (rt) => ({ rt, s: await routerSample(rt) })),
    );
  return {
    routerSamples,
    async take() {
      let got: { rt: SoakRouter; s: RouterSample }[];
      try {
        got = await routerSamples();
      } catch (err) {
        st.log(`sample failed at ${sinceText(st.t0, Date.now())}: ${(err as Error).message}`);
        return;
      }
      st.lastPrograms = got.flatMap((g) => g.s.programs);
      const stats = got.map(({ rt, s }) => {
        violate(st, onRouter(cells, rt.name, rt.checker.observe(s)));
        noteDrift(st, s);
        const p = procStats(rt.pid);
        rt.last = { rssMb: p.rssMb, live: s.programs.length };
        return { rssMb: p.rssMb, cpuS: p.cpuS === null ? null : p.cpuS + rt.cpuBeforeS };
      });
      const readings: RouterReading[] = [];
      for (const [i, { rt }] of got.entries()) {
        // A cell killed since its views were read has no metrics: its heap is unknown.
        const text = await fetch(`${rt.url}/metrics`)
          .then((res) => res.text())
          .catch(() => "");
        readings.push({ ...stats[i], ...metricsReading(text) });
      }
      st.samples.push(
        combineSample({
          tS: (Date.now() - st.t0) / 1000,
          readings,
          downCpuS: fleet.routers.filter((rt) => !rt.up).reduce((t, rt) => t + rt.cpuBeforeS, 0),
          livePrograms: st.lastPrograms.length,
          programsSeen: st.programsSeen + st.loopPrograms(),
          requests: ledger.sent.get(CHAT_PATH) ?? 0,
          cells: fleet.routers.map((rt) => ({
            name: rt.name,
            rss_mb: rt.up ? rt.last.rssMb : null,
            live_programs: rt.up ? rt.last.live : 0,
          })),
        }),
      );
    },
  };
}
