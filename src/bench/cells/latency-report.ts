/**
 * The latency part of `npm run bench:cells`'s report, as lines: each kind of request straight
 * to the cell and through HAProxy, p50/p90 and what HAProxy adds, HAProxy's own timers, and its
 * CPU per request under load.
 */
import { median, percentileOf as pct } from "../percentile.ts";
import { renderTable } from "../table-cells.ts";
import { inWindow, type Span } from "./cells-analysis.ts";
import type { CellsRun } from "./cells-run.ts";
import { f0, f2, f3 } from "./format.ts";
import type { HapRequest } from "./haproxy-log.ts";
import type { LatencyResult } from "./latency.ts";
import { CELLS } from "./stack-shape.ts";

/** The p50 HAProxy adds to a request, ms (NaN with none measured). */
export const addedP50 = (r: LatencyResult) => pct(r.haproxy, 50) - pct(r.direct, 50);

const latRows = (label: string, r: LatencyResult) => [
  [
    `${label}, direct to ${CELLS[0]}`,
    String(r.direct.length),
    f2(pct(r.direct, 50)),
    f2(pct(r.direct, 90)),
    "",
    "",
  ],
  [
    `${label}, through HAProxy`,
    String(r.haproxy.length),
    f2(pct(r.haproxy, 50)),
    f2(pct(r.haproxy, 90)),
    f3(addedP50(r)),
    f3(r.cpuMsPerRequest),
  ],
];

/** HAProxy's own timers of the latency program's requests in `w`, p50 ms. */
function timers(requests: readonly HapRequest[], id: string, w: Span): string {
  const rs = requests.filter((r) => r.program === id && inWindow(r.startMs, w));
  const p = (f: (r: HapRequest) => number) => f0(median(rs.map(f)));
  return `TR ${p((r) => r.tR)} / Tw ${p((r) => r.tw)} / Tc ${p((r) => r.tc)} / Tr ${p((r) => r.tr)} / Ta ${p((r) => r.ta)}`;
}

export function latencyLines(run: CellsRun): string[] {
  const l = run.latency;
  const { small, large } = l;
  const { hapRequests: requests, samples } = run;
  const loadReqs = requests.filter((r) => inWindow(r.startMs, { from: run.t0, to: run.endAt }));
  const loadCpu = samples[samples.length - 1].haproxy - samples[0].haproxy;
  const perRequest = (loadCpu * 1000) / Math.max(1, loadReqs.length);
  return [
    "",
    `latency HAProxy adds, load stopped: non-streaming chat completions (max_tokens 1, program ${l.id}, which the hash gives ${CELLS[0]}), one at a time, alternately direct and through HAProxy`,
    renderTable(
      ["request", "n", "p50 ms", "p90 ms", "p50 added ms", "HAProxy CPU ms/request"],
      [
        ...latRows(`small (${l.smallBytes} B)`, small),
        ...latRows(`large (${(l.largeBytes / 1024).toFixed(0)} KiB)`, large),
      ],
    ),
    ...(small.failed + large.failed > 0
      ? [`latency requests answered with another status than 200: ${small.failed + large.failed}`]
      : []),
    `HAProxy's own timers, p50 ms (1 ms resolution): small ${timers(requests, l.id, l.smallWindow)}; large ${timers(requests, l.id, l.largeWindow)}`,
    `HAProxy CPU under load: ${f2(loadCpu)} s for ${loadReqs.length} requests (program releases included) = ${f3(perRequest)} ms per request`,
  ];
}
