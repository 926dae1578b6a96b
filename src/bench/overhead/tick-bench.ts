/**
 * `bench:tick`: the scheduler core's cost of one `tick` with N tracked programs, of a request
 * turn while a queue waits, and its heap per tracked program. Per size: a tick squeezes every
 * backend to 90 % of its use (a pause storm: thousands of pauses and marks), steady ticks
 * follow with a few thousand programs queued, and a tick that restores capacity resumes them (a
 * resume storm); a world with lending on lends at its first tick (a lend storm). Targets: tick
 * ≤ 5 ms at 10,000 programs, ≤ 50 ms at 100,000; ≤ 2 KB/program.
 *
 * Each figure is the median over freshly built worlds (storms) or over all steady ticks; the
 * machine is shared, so compare runs side by side.
 */
import { performance } from "node:perf_hooks";
import { integer, listOfItems } from "../../config/values.ts";
import { median, percentileOf } from "../percentile.ts";
import type { ScriptSpec } from "../script-args.ts";
import { jsonFlag } from "../script-flags.ts";
import { buildWorld, HUGE_CAPACITY } from "./tick-world.ts";

export const BENCH_TICK_SPEC = {
  name: "bench:tick",
  summary:
    "The scheduler core's tick with N tracked programs (pause, steady, resume and lend storms), a request turn while a queue waits, and heap per program.",
  runtime:
    "about 2 min (timed: 130 s on a busy shared core); scales with --sizes × --repeats, the largest size most",
  flags: {
    sizes: {
      arg: "<list>",
      default: "10000,100000",
      description: "tracked programs, one world per size",
      check: listOfItems(integer(1, 10_000_000)),
    },
    backends: { arg: "<n>", default: "64", description: "backends", check: integer(1, 100_000) },
    repeats: {
      arg: "<n>",
      default: "5",
      description: "freshly built worlds per size; storms are their median",
      check: integer(1, 10_000),
    },
    "steady-ticks": {
      arg: "<n>",
      default: "50",
      description: "steady ticks per world",
      check: integer(1, 1_000_000),
    },
    json: jsonFlag("also write the figures as JSON"),
  },
  notes: [
    "Heap per program is measured only under node --expose-gc, as npm run bench:tick runs it.",
  ],
} satisfies ScriptSpec;

/** The pause storm's tick: every backend's capacity at this share of what it holds. */
const SQUEEZE = 0.9;
/** The resume storm's tick: capacity back above what the backends held. */
const RELIEF = 1.2;
/** Request turns timed per world, while the queue waits. */
const MAX_TURNS = 2_000;
/** Programs of the warm-up run, so that the storms measure optimised code, not the JIT's first pass. */
export const WARMUP_PROGRAMS = 5_000;

export interface TickOptions {
  backends: number;
  /** Freshly built worlds; a storm's figure is their median. */
  repeats: number;
  steadyTicks: number;
}

export interface TickResult {
  programs: number;
  backends: number;
  pauseStormTickMs: number;
  steadyTickMsMedian: number;
  steadyTickMsP99: number;
  resumeStormTickMs: number;
  turnWithQueueUs: number;
  pausedInStorm: number;
  markedInStorm: number;
  resumedInStorm: number;
  lendStormTickMs: number;
  lentInStorm: number;
}

/** Every figure for `programs` tracked programs; the counts are the last world's. */
export function benchTickSize(programs: number, o: TickOptions): TickResult {
  const pauseStorm: number[] = [];
  const resumeStorm: number[] = [];
  const steady: number[] = [];
  const turnUs: number[] = [];
  let paused = 0;
  let marks = 0;
  let resumed = 0;
  const lendStorm: number[] = [];
  let lent = 0;
  for (let rep = 0; rep < o.repeats; rep++) {
    const w = buildWorld({ programs, backends: o.backends, seed: rep + 1 });
    const used = new Map(w.scheduler.snapshot().backends.map((b) => [b.id, b.usedTokens]));
    const squeezed = (id: string) => Math.floor((used.get(id) as number) * SQUEEZE);
    pauseStorm.push(w.tick(squeezed));
    const after = w.scheduler.snapshot();
    paused = after.counters.pauses;
    marks = after.counters.marks;
    for (let i = 0; i < o.steadyTicks; i++) steady.push(w.tick(squeezed));
    // Request turns of active programs while the queue holds thousands of paused programs:
    // every request end tries a resume (the O(queue) event-path cost).
    const active = after.programs.filter((p) => p.state === "ACTIVE" && p.inFlight === 0);
    const turns = Math.min(MAX_TURNS, active.length);
    const t0 = performance.now();
    for (let i = 0; i < turns; i++) {
      const p = active[i];
      const now = ++w.now;
      const requestId = `turn-${rep}-${i}`;
      w.scheduler.handle({
        kind: "request_arrived",
        now,
        requestId,
        programId: p.id,
        messageChars: [p.totalTokens * 5],
        final: false,
      });
      w.scheduler.handle({ kind: "request_finished", now, requestId, outcome: "ok" });
    }
    turnUs.push(((performance.now() - t0) * 1000) / Math.max(1, turns));
    const before = w.scheduler.snapshot().counters.resumes;
    resumeStorm.push(w.tick((id) => Math.floor((used.get(id) as number) * RELIEF)));
    resumed = w.scheduler.snapshot().counters.resumes - before;
    const l = buildWorld({ programs, backends: o.backends, seed: rep + 1, lend: true });
    const lentBefore = l.scheduler.snapshot().backends.reduce((a, b) => a + b.lentPrograms, 0);
    lendStorm.push(l.tick(() => HUGE_CAPACITY));
    lent = l.scheduler.snapshot().backends.reduce((a, b) => a + b.lentPrograms, 0) - lentBefore;
  }
  return {
    programs,
    backends: o.backends,
    pauseStormTickMs: median(pauseStorm),
    steadyTickMsMedian: median(steady),
    steadyTickMsP99: percentileOf(steady, 99),
    resumeStormTickMs: median(resumeStorm),
    turnWithQueueUs: median(turnUs),
    pausedInStorm: paused,
    markedInStorm: marks,
    resumedInStorm: resumed,
    lendStormTickMs: median(lendStorm),
    lentInStorm: lent,
  };
}

export interface HeapPerProgram {
  programs: number;
  bytesPerProgram: number;
}

/**
 * The heap a world of `programs` adds, per tracked program; null without a `gc` to call (node
 * runs without --expose-gc), since garbage would otherwise be counted with the programs.
 */
export function heapPerProgram(
  programs: number,
  backends: number,
  gc = (globalThis as { gc?: () => void }).gc,
  heapUsed = () => process.memoryUsage().heapUsed,
): HeapPerProgram | null {
  if (gc === undefined) return null;
  gc();
  gc();
  const before = heapUsed();
  const w = buildWorld({ programs, backends, seed: 99 });
  gc();
  gc();
  const after = heapUsed();
  const tracked = w.scheduler.snapshot().programs.length;
  return { programs: tracked, bytesPerProgram: (after - before) / tracked };
}

/** One size's figures as the line bench:tick prints. */
export const tickLine = (r: TickResult) =>
  `${r.programs} programs / ${r.backends} backends: ` +
  `pause-storm tick ${r.pauseStormTickMs.toFixed(2)} ms (${r.pausedInStorm} paused, ` +
  `${r.markedInStorm} marked), steady tick median ${r.steadyTickMsMedian.toFixed(3)} ms ` +
  `p99 ${r.steadyTickMsP99.toFixed(3)} ms, resume-storm tick ${r.resumeStormTickMs.toFixed(2)} ms ` +
  `(${r.resumedInStorm} resumed), lend-storm tick ${r.lendStormTickMs.toFixed(2)} ms (${r.lentInStorm} lent), ` +
  `request turn with queue ${r.turnWithQueueUs.toFixed(1)} µs`;

/** The heap figure's line, or what to do to get one. */
export const memoryLine = (m: HeapPerProgram | null) =>
  m === null
    ? "memory: run with node --expose-gc to measure heap per program"
    : `memory: ${m.bytesPerProgram.toFixed(0)} bytes per tracked program (${m.programs} programs)`;
