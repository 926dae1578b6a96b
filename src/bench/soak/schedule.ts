import { createRng } from "../../workload/prng.ts";

/**
 * The soak's faults (`npm run soak`; faults.ts runs them), on a seeded schedule: the same seed,
 * length and backends give the same faults at the same moments on the same backends. The run
 * between the warm-up and the tail (the time left for the router to settle before load stops)
 * is cut into one slot per fault; the kinds are dealt to the slots in a seeded order, and each
 * fault starts a seeded moment into the first part of its slot and lasts at most the rest of
 * it. So no two faults overlap: every failed request is explained by at most one fault, and a
 * backend that is down always has the other backends beside it. With cells (`soak --cells N`,
 * N ≥ 2) one more kind, a cell killed, is dealt among the others, the cells taken in turn; the
 * backend faults go round every cell's backends.
 */

export const FAULT_KINDS = [
  /** SIGKILL a backend, start it again on the same port after the fault's length. */
  "kill",
  /** SIGSTOP a backend for longer than the router's poll timeout, then SIGCONT. */
  "stop",
  /** The backend's `/metrics` answers garbage, 500s, or a slow body (POST /sim/metrics-fault). */
  "metrics-garbage",
  "metrics-error",
  "metrics-slow",
  /** Clients that hang up: mid-stream, before the response head, while their request is held. */
  "disconnect-mid-stream",
  "disconnect-before-head",
  "disconnect-held",
  /** Many new programs at once. */
  "burst",
] as const;
/** Faults only a fleet of cells has: SIGKILL a cell's `serve`, restart it empty on its port. */
export const CELL_FAULT_KINDS = ["kill-cell"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number] | (typeof CELL_FAULT_KINDS)[number];

/** Faults aimed at one backend; the others are the clients' own. */
export const BACKEND_FAULTS: ReadonlySet<FaultKind> = new Set([
  "kill",
  "stop",
  "metrics-garbage",
  "metrics-error",
  "metrics-slow",
]);

export interface Fault {
  kind: FaultKind;
  /** When it starts, ms from the run's start. */
  atMs: number;
  /** How long it lasts (a killed backend's time down, a stopped one's time stopped, …). */
  lengthMs: number;
  /** The backend it hits (index over every cell's backends), or null for the others. */
  backend: number | null;
  /** The cell it kills (index), or null for the others. */
  cell: number | null;
}

export interface ScheduleOptions {
  seed: number;
  /** The whole run's load, ms. */
  durationMs: number;
  /** No fault before this (the router warms up). */
  warmupMs: number;
  /** No fault in the last `tailMs` of the load (the router settles before the end checks). */
  tailMs: number;
  /** Backends in all, over every cell. */
  backends: number;
  /** Cells behind HAProxy; 0 for one router alone (no cell is killed then, nor with one cell). */
  cells?: number;
  /** Faults of each kind (at least 1). */
  perKind: number;
  /** Length of each kind's fault, ms (what it must be to mean anything: see the soak). */
  lengthMs: Readonly<Record<FaultKind, number>>;
}

/** Share of a slot a fault may start in; it lasts at most the rest of the slot. */
const START_SHARE = 0.25;

/** The faults, in time order; throws when a fault would not fit its slot. */
export function faultSchedule(o: ScheduleOptions): Fault[] {
  if (o.backends < 2) throw new Error("a fault schedule needs at least 2 backends");
  const rng = createRng(o.seed);
  const cells = o.cells ?? 0;
  const all: readonly FaultKind[] =
    cells >= 2 ? [...FAULT_KINDS, ...CELL_FAULT_KINDS] : FAULT_KINDS;
  const kinds = all.flatMap((k) => Array.from({ length: Math.max(1, o.perKind) }, () => k));
  // Fisher–Yates on the seeded stream.
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
  }
  const span = o.durationMs - o.warmupMs - o.tailMs;
  const slotMs = span / kinds.length;
  let nextBackend = rng.int(0, o.backends - 1);
  // Drawn only with cells: a lone router's schedule for a seed does not depend on the cell draw.
  let nextCell = cells >= 2 ? rng.int(0, cells - 1) : 0;
  return kinds.map((kind, i) => {
    const lengthMs = o.lengthMs[kind];
    const room = slotMs * (1 - START_SHARE);
    if (lengthMs > room) {
      throw new Error(
        `a ${kind} fault of ${lengthMs} ms does not fit a slot of ${Math.round(slotMs)} ms (${kinds.length} faults in ${span} ms); lengthen the run or inject fewer`,
      );
    }
    const atMs = Math.round(o.warmupMs + i * slotMs + rng.next() * slotMs * START_SHARE);
    let backend: number | null = null;
    let cell: number | null = null;
    if (BACKEND_FAULTS.has(kind)) {
      // Round the fleet, so each backend takes its share of every kind over a long run.
      backend = nextBackend;
      nextBackend = (nextBackend + 1) % o.backends;
    } else if (kind === "kill-cell") {
      cell = nextCell;
      nextCell = (nextCell + 1) % cells;
    }
    return { kind, atMs, lengthMs, backend, cell };
  });
}

/** What each kind's length is cut to: the soak's run and its router's poll timeout. */
export interface LengthOptions {
  durationMs: number;
  warmupMs: number;
  tailMs: number;
  /** Cells behind HAProxy; with 2 or more, cells are killed too (one kind more per slot). */
  cells: number;
  perKind: number;
  /** The router's `--poll-timeout`, ms. */
  pollTimeoutMs: number;
}

/**
 * Each kind's length: as long as it must be to mean anything, cut to 0.7 of its slot so it
 * fits the part of the slot after its start (START_SHARE) with room to spare.
 */
export function faultLengths(o: LengthOptions): Record<FaultKind, number> {
  const kinds = FAULT_KINDS.length + (o.cells >= 2 ? CELL_FAULT_KINDS.length : 0);
  const slot = (o.durationMs - o.warmupMs - o.tailMs) / (kinds * o.perKind);
  const fit = (ms: number) => Math.min(ms, Math.floor(slot * 0.7));
  // Stopped past the poll timeout, so the router sees a frozen backend, not a slow one.
  const stopMs = Math.max(3 * o.pollTimeoutMs, fit(15_000));
  return {
    kill: fit(5_000),
    stop: stopMs,
    "metrics-garbage": fit(20_000),
    "metrics-error": fit(20_000),
    "metrics-slow": fit(20_000),
    "disconnect-mid-stream": fit(5_000),
    "disconnect-before-head": fit(5_000),
    "disconnect-held": fit(10_000),
    burst: fit(10_000),
    // Down past HAProxy's two failed checks, so it leaves the ring before it comes back.
    "kill-cell": fit(10_000),
  };
}
