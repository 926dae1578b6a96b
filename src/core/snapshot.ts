import type { BackendView, EngineTruthView, ProgramView, SchedulerSnapshot } from "./api.ts";
import { budgetView } from "./budget.ts";
import { activePrograms } from "./ledger.ts";
import { hostLoadBytesPerSecond, pausePriceOf } from "./pause-price.ts";
import { PRIORITY_CLASSES } from "./priority/priority-classes.ts";
import { prioritySnapshot } from "./priority/priority-snapshot.ts";
import type { BackendBook, ProgramRecord } from "./records.ts";
import { beliefRoomTokens, beliefUsedTokens, roomOn, TRUTH_FULL, truthRoomTokens } from "./room.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/** Read-only views for /programs, /health, /backends and /metrics (copies, never live records). */

export function programView(state: SchedulerState, p: ProgramRecord): ProgramView {
  const pausedNow = p.pausedSince === null ? 0 : state.now - p.pausedSince;
  const view: ProgramView = {
    id: p.id,
    backend: p.backend?.id ?? null,
    originBackend: p.originBackend,
    status: p.status,
    state: p.state,
    totalTokens: p.tokens,
    headroomTokens: p.headroom,
    lent: p.lent,
    steps: p.steps,
    inFlight: p.inFlight.length,
    parkedRequests: p.parked.length,
    markedForPause: p.markedForPause,
    pausedMs: p.pausedMsTotal + pausedNow,
    pausedSince: p.pausedSince,
    parentProgramId: p.parentProgramId,
    lastActivity: p.lastActivity,
    likelyDoneAt: p.likelyDoneAt,
    children: childIds(p),
    ...(state.priority === null ? {} : { priorityClass: PRIORITY_CLASSES[p.cls] }),
  };
  const budget = budgetView(state, p);
  if (budget !== undefined) view.budget = budget;
  return view;
}

function childIds(p: ProgramRecord): string[] {
  if (p.children.size === 0) return [];
  const ids: string[] = [];
  for (const c of p.children) ids.push(c.id);
  return ids;
}

export function backendView(state: SchedulerState, b: BackendBook): BackendView {
  const price = pausePriceOf(state, b);
  return {
    id: b.id,
    healthy: b.healthy,
    consecutiveFailures: b.consecutiveFailures,
    capacityTokens: b.capacity,
    admissionCapacityTokens: price.admissionCapacity(b),
    pausePrice: price.name,
    hostLoadBytesPerSecond: hostLoadBytesPerSecond(b),
    priorityScheduling: b.priorityPolarity,
    usedTokens: beliefUsedTokens(b, state.config, state.now),
    beliefRoomTokens: beliefRoomTokens(state, b),
    // Capacity unknown: placed on by the engine's report, one program per sample, no token room.
    remainingTokens: b.capacity === null ? null : roomOn(state, b),
    truth: truthView(state, b),
    lentPrograms: b.lentPrograms,
    sharedTokens: b.shared,
    markedTokens: b.markedTokens,
    reasoningTokens: b.reasoningTokens,
    actingTokens: b.actingTokens,
    activePrograms: activePrograms(b),
    reasoningPrograms: b.reasoningPrograms,
    actingPrograms: b.actingPrograms,
    anonymousInFlight: anonymousInFlight(b),
    lastMetrics: b.lastMetrics,
  };
}

/** Requests without a program on `b`: one-step anonymous programs and released leftovers. */
function anonymousInFlight(b: BackendBook): number {
  let n = b.anonymousInFlight;
  for (const r of b.inFlight) if (r.program?.anonymous === true) n++;
  return n;
}

function truthView(state: SchedulerState, b: BackendBook): EngineTruthView | null {
  const t = b.truth;
  if (t === null) return null;
  const room = truthRoomTokens(state, b);
  const belief = beliefRoomTokens(state, b);
  const known = room !== null && room !== TRUTH_FULL;
  return {
    sampledAt: t.at,
    kvUsage: t.kvUsage,
    running: t.running,
    waiting: t.waiting,
    preempting: t.preempting,
    pendingTokens: t.pendingTokens,
    full: room === TRUTH_FULL,
    roomTokens: known ? room : null,
    gapTokens: known && belief !== null ? room - belief : null,
  };
}

export function snapshot(state: SchedulerState): SchedulerSnapshot {
  const programs: ProgramView[] = [];
  for (const p of state.programs.values()) programs.push(programView(state, p));
  const anonymousPrograms: ProgramView[] = [];
  for (const b of state.backends) {
    for (const p of b.programs) if (p.anonymous) anonymousPrograms.push(programView(state, p));
  }
  for (const p of state.queue) if (p.anonymous) anonymousPrograms.push(programView(state, p));
  return {
    mode: state.config.mode,
    now: state.now,
    programs,
    anonymousPrograms,
    backends: state.backends.map((b) => backendView(state, b)),
    counters: { ...state.counters },
    budgetsExhausted: { ...state.budgetsExhausted },
    queueLength: state.parkedOrder.size,
    pausedPrograms: state.queue.size,
    endedPrograms: state.ended.size,
    ...(state.priority === null ? {} : { priority: prioritySnapshot(state) }),
  };
}
