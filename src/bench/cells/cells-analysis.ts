/**
 * What `npm run bench:cells` reads from HAProxy's request log (haproxy-log.ts) and the driver's
 * records: whether each program stays on one cell, which programs moved when a cell died and
 * came back, which log line is which driver attempt, the load a lone router should get to
 * stand in for one cell, and each part's share of the CPU. Pure functions over the records, so
 * each rule is tested here.
 */

import type { ProgramRecord } from "../records.ts";
import type { HapRequest } from "./haproxy-log.ts";

/** A span of the driver's clock (ms since the epoch), `from` included, `to` not. */
export interface Span {
  from: number;
  to: number;
}

export const inWindow = (t: number, w: Span) => t >= w.from && t < w.to;
/** The request ran wholly inside `w`: no cell changed while it was in flight. */
export const within = (r: HapRequest, w: Span) => r.startMs >= w.from && r.endMs < w.to;
/** Answered in full: a 200 that ended normally (a cut stream is logged 200 too, `SD`). */
export const answered = (r: HapRequest) => r.status === 200 && r.term.startsWith("--");
export const sum = (xs: readonly number[]) => xs.reduce((s, v) => s + v, 0);

export interface Affinity {
  programs: number;
  /** The mean over programs of the share of their requests their most-used cell served. */
  meanShare: number;
  /** Programs served by more than one cell. */
  below: number;
}

/** Per program, the share of its answered requests in `w` that its most-used cell served. */
export function affinity(reqs: readonly HapRequest[], w: Span): Affinity {
  const per = new Map<string, Map<string, number>>();
  for (const r of reqs) {
    if (!answered(r) || !within(r, w)) continue;
    const program = r.program as string;
    const m = per.get(program) ?? new Map<string, number>();
    per.set(program, m);
    m.set(r.server, (m.get(r.server) ?? 0) + 1);
  }
  let total = 0;
  let below = 0;
  for (const m of per.values()) {
    const counts = [...m.values()];
    const s = Math.max(...counts) / sum(counts);
    total += s;
    if (s < 1) below++;
  }
  return { programs: per.size, meanShare: per.size === 0 ? Number.NaN : total / per.size, below };
}

/** Programs answered in both spans, and those whose last cell in `before` ≠ first in `after`. */
export function moves(reqs: readonly HapRequest[], before: Span, after: Span) {
  const last = new Map<string, string>();
  const first = new Map<string, string>();
  for (const r of reqs) {
    if (!answered(r)) continue;
    const p = r.program as string;
    if (within(r, before)) last.set(p, r.server);
    if (within(r, after) && !first.has(p)) first.set(p, r.server);
  }
  let both = 0;
  const moved: { program: string; from: string; to: string }[] = [];
  for (const [program, from] of last) {
    const to = first.get(program);
    if (to === undefined) continue;
    both++;
    if (to !== from) moved.push({ program, from, to });
  }
  return { both, moved };
}

/** Each program's requests in HAProxy's log, by start. */
export function byProgram(reqs: readonly HapRequest[]): Map<string, HapRequest[]> {
  const m = new Map<string, HapRequest[]>();
  for (const r of reqs) {
    const list = m.get(r.program as string) ?? [];
    m.set(r.program as string, list);
    list.push(r);
  }
  for (const list of m.values()) list.sort((x, y) => x.startMs - y.startMs);
  return m;
}

/** How far apart a driver's attempt and its log line may start: a program's requests are a
 * step and a tool call apart, so within 1 s there is one. */
const SAME_REQUEST_MS = 1000;

/** The log line of a driver's attempt: its program's request that started nearest it. */
export function logOf(
  at: { programId: string; startMs: number },
  index: Map<string, HapRequest[]>,
): HapRequest | null {
  let best: HapRequest | null = null;
  for (const r of index.get(at.programId) ?? []) {
    const d = Math.abs(r.startMs - at.startMs);
    if (d <= SAME_REQUEST_MS && (best === null || d < Math.abs(best.startMs - at.startMs)))
      best = r;
  }
  return best;
}

/** Time-averaged programs in flight per cell over `w`, from the driver's program records. */
export function meanInFlight(
  cells: readonly string[],
  programs: readonly ProgramRecord[],
  runEndMs: number,
  t0: number,
  cellOf: (id: string) => string | undefined,
  w: Span,
): number[] {
  const out = cells.map(() => 0);
  for (const p of programs) {
    const c = cells.indexOf(cellOf(p.programId) ?? "");
    const from = Math.max(w.from, t0 + p.launchMs);
    const to = Math.min(w.to, t0 + (p.endMs ?? runEndMs));
    if (c >= 0 && to > from) out[c] += (to - from) / (w.to - w.from);
  }
  return out;
}

/** Integers summing to `total`, proportional to `weights` (largest remainders). */
export function apportion(weights: readonly number[], total: number): number[] {
  const whole = sum(weights);
  const exact = weights.map((v) => (v / whole) * total);
  const out = exact.map(Math.floor);
  const order = exact.map((v, i) => [v - Math.floor(v), i] as const).sort((x, y) => y[0] - x[0]);
  for (let k = 0; sum(out) < total; k++) out[order[k % order.length][1]]++;
  return out;
}

/** CPU seconds so far of each part of the stack, and the machine's jiffies. */
export interface CpuSample {
  backends: number;
  cells: number;
  haproxy: number;
  driver: number;
  busy: number;
  total: number;
}

/**
 * % of one CPU each part used between two samples `wallMs` apart; `other` is what the rest of
 * the machine used (its busy time from /proc/stat less ours, over its `cpuCount` CPUs): on a
 * shared machine, the noise.
 */
export function cpuShares(s0: CpuSample, s1: CpuSample, wallMs: number, cpuCount: number) {
  const pct = (v: number) => (100 * v) / (wallMs / 1000);
  const machine = (s1.busy - s0.busy) / (s1.total - s0.total);
  const ours =
    s1.backends -
    s0.backends +
    s1.cells -
    s0.cells +
    s1.haproxy -
    s0.haproxy +
    s1.driver -
    s0.driver;
  return {
    machine: 100 * machine,
    backends: pct(s1.backends - s0.backends),
    cells: pct(s1.cells - s0.cells),
    haproxy: pct(s1.haproxy - s0.haproxy),
    driver: pct(s1.driver - s0.driver),
    other: pct(machine * cpuCount * (wallMs / 1000) - ours),
  };
}
