import type { BackendView, ProgramView, SchedulerSnapshot } from "./api.ts";
import { activePrograms, roomTokens, usedTokens } from "./ledger.ts";
import { PRIORITY_CLASSES } from "./priority/priority-classes.ts";
import { prioritySnapshot } from "./priority/priority-snapshot.ts";
import type { BackendBook, ProgramRecord, SchedulerState } from "./scheduler-state.ts";

/** Read-only views for /programs, /health, /backends and /metrics (copies, never live records). */

export function programView(state: SchedulerState, p: ProgramRecord): ProgramView {
  const pausedNow = p.pausedSince === null ? 0 : state.now - p.pausedSince;
  return {
    id: p.id,
    backend: p.backend?.id ?? null,
    originBackend: p.originBackend,
    status: p.status,
    state: p.state,
    totalTokens: p.tokens,
    steps: p.steps,
    inFlight: p.inFlight.length,
    parkedRequests: p.parked.length,
    markedForPause: p.markedForPause,
    pausedMs: p.pausedMsTotal + pausedNow,
    pausedSince: p.pausedSince,
    parentProgramId: p.parentProgramId,
    lastActivity: p.lastActivity,
    ...(state.priority === null ? {} : { priorityClass: PRIORITY_CLASSES[p.cls] }),
  };
}

export function backendView(state: SchedulerState, b: BackendBook): BackendView {
  return {
    id: b.id,
    healthy: b.healthy,
    consecutiveFailures: b.consecutiveFailures,
    capacityTokens: b.capacity,
    usedTokens: usedTokens(b, state.config),
    remainingTokens: roomTokens(b, state.config),
    sharedTokens: b.shared,
    markedTokens: b.markedTokens,
    reasoningTokens: b.reasoningTokens,
    actingTokens: b.actingTokens,
    activePrograms: activePrograms(b),
    reasoningPrograms: b.reasoningPrograms,
    actingPrograms: b.actingPrograms,
    anonymousInFlight: b.anonymousInFlight,
    lastMetrics: b.lastMetrics,
  };
}

export function snapshot(state: SchedulerState): SchedulerSnapshot {
  const programs: ProgramView[] = [];
  for (const p of state.programs.values()) programs.push(programView(state, p));
  return {
    mode: state.config.mode,
    now: state.now,
    programs,
    backends: state.backends.map((b) => backendView(state, b)),
    counters: { ...state.counters },
    queueLength: state.parkedOrder.size,
    pausedPrograms: state.queue.size,
    ...(state.priority === null ? {} : { priority: prioritySnapshot(state) }),
  };
}
