/**
 * JSON views for the admin endpoints, shaped like ThunderAgent's (lower-case status/state, objects keyed by program id or backend URL) with the fields
 * maitred adds (time paused, marks, parent, in-flight count, engine truth).
 */

import type { TailFields } from "../config/tail-preset.ts";
import {
  type BackendView,
  BUDGET_KINDS,
  type BudgetView,
  type HoldView,
  type PrioritySnapshot,
  type ProgramView,
  type SchedulerSnapshot,
} from "../core/api.ts";
import type { BackendMetricsSample } from "../core/events.ts";
import type { DurationView, ShadowDecision, ShadowSummary } from "../shadow/shadow.ts";
import { splitProgramKey } from "./program-scope.ts";
import type { CellPhase } from "./proxy-deps.ts";

export function programJson(p: ProgramView) {
  const { tenant, programId } = splitProgramKey(p.id);
  return {
    program_id: programId,
    // The caller the id belongs to (program-scope.ts); null for an anonymous caller.
    tenant,
    backend: p.backend,
    origin_backend: p.originBackend,
    status: p.status.toLowerCase(),
    state: p.state.toLowerCase(),
    total_tokens: p.totalTokens,
    headroom_tokens: p.headroomTokens,
    room_lent: p.lent,
    step_count: p.steps,
    in_flight: p.inFlight,
    marked_for_pause: p.markedForPause,
    paused_ms: p.pausedMs,
    paused_since: p.pausedSince,
    parent_program_id:
      p.parentProgramId === null ? null : splitProgramKey(p.parentProgramId).programId,
    // Its live sub-agents (same caller, so the same tenant).
    children: p.children.map((c) => splitProgramKey(c).programId),
    last_activity: p.lastActivity,
    budget: budgetJson(p.budget),
    // Its answer ended with no tool call at this time: released after --final-grace unless
    // it sends again; null when not.
    likely_done_since: p.likelyDoneAt,
    // Present only while priorities are on (a program takes its latest request's class).
    ...(p.priorityClass === undefined ? {} : { priority_class: p.priorityClass }),
  };
}

/**
 * Each budget the program runs under, with what it used and what is left (`wall_ms` in ms, as
 * of the core's last event); null when it has none.
 */
export function budgetJson(b: BudgetView | undefined) {
  if (b === undefined) return null;
  const out: Record<string, { limit: number; used: number; left: number }> = {};
  for (const kind of BUDGET_KINDS) {
    const u = b[kind];
    if (u !== undefined)
      out[kind === "wall" ? "wall_ms" : kind] = {
        limit: u.limit,
        used: u.used,
        left: Math.max(0, u.limit - u.used),
      };
  }
  return out;
}

/** A hold's times from `now` (ms): waited so far, until room is made, until it is seated. */
export function holdTimes(v: HoldView, now: number) {
  return {
    waitedMs: Math.max(0, now - v.parkedAt),
    roomInMs: v.roomAt === null ? null : Math.max(0, v.roomAt - now),
    seatInMs: Math.max(0, v.seatAt - now),
  };
}

/**
 * Where a program's held request stands (the core's hold-position.ts): its place in the queue
 * (1 = next), how long it has waited, when room is made for it (ageing, or its class's
 * threshold with priorities on) and when it is seated at the latest (the max pause), as
 * times on the router's clock (ms since the epoch) and as ms from `now`. null when nothing of
 * the program is held.
 */
export function holdJson(v: HoldView | null, now: number) {
  if (v === null) return null;
  const t = holdTimes(v, now);
  return {
    position: v.position,
    held_programs: v.waitingPrograms,
    held_since: v.parkedAt,
    waited_ms: t.waitedMs,
    room_made_by: v.roomBound,
    room_made_at: v.roomAt,
    room_made_in_ms: t.roomInMs,
    seated_by: v.seatAt,
    seated_in_ms: t.seatInMs,
    max_wait_at: v.maxWaitAt,
    queue_timeout_at: v.queueTimeoutAt,
    ...(v.priorityClass === undefined ? {} : { priority_class: v.priorityClass }),
  };
}

/** Keyed by the core's key: the bare id, or `<tenant>\u001f<id>` for a tenant's program. */
export function programsJson(snapshot: SchedulerSnapshot) {
  const out: Record<string, ReturnType<typeof programJson>> = {};
  for (const p of snapshot.programs) out[p.id] = programJson(p);
  return out;
}

function count<T>(items: readonly T[], pred: (x: T) => boolean): number {
  let n = 0;
  for (const x of items) if (pred(x)) n++;
  return n;
}

/**
 * Whether this router takes new programs, and why not: a balancer's health check reads the
 * answer's status (200 or 503) to keep the cell in its ring or move new programs elsewhere.
 * A cell with no healthy backend could only park or refuse them.
 */
export function takesNewPrograms(
  phase: CellPhase,
  snapshot: SchedulerSnapshot,
): { takes: boolean; status: string } {
  if (phase === "stopping") return { takes: false, status: "shutting_down" };
  if (phase === "draining") return { takes: false, status: "draining" };
  if (!snapshot.backends.some((b) => b.healthy))
    return { takes: false, status: "no_healthy_backend" };
  return { takes: true, status: "ok" };
}

export function healthJson(
  snapshot: SchedulerSnapshot,
  cell: string,
  phase: CellPhase,
  profileEnabled: boolean,
  shadow = false,
) {
  const ps = snapshot.programs;
  const perBackend: Record<string, unknown> = {};
  for (const b of snapshot.backends) {
    const mine = ps.filter((p) => p.backend === b.id);
    perBackend[b.id] = {
      healthy: b.healthy,
      total: mine.length,
      reasoning: count(mine, (p) => p.status === "REASONING"),
      acting: count(mine, (p) => p.status === "ACTING"),
      marked_for_pause: count(mine, (p) => p.markedForPause),
      marked_tokens: b.markedTokens,
      anonymous_in_flight: b.anonymousInFlight,
    };
  }
  const { takes, status } = takesNewPrograms(phase, snapshot);
  return {
    status,
    cell,
    takes_new_programs: takes,
    mode: snapshot.mode,
    scheduling_enabled: snapshot.mode === "tr",
    backends: snapshot.backends.map((b) => b.id),
    healthy_backends: count(snapshot.backends, (b) => b.healthy),
    programs_count: ps.length,
    reasoning_count: count(ps, (p) => p.status === "REASONING"),
    acting_count: count(ps, (p) => p.status === "ACTING"),
    active_count: count(ps, (p) => p.state === "ACTIVE"),
    paused_count: count(ps, (p) => p.state === "PAUSED"),
    queue_length: snapshot.queueLength,
    per_backend: perBackend,
    profile_enabled: profileEnabled,
    // `--shadow`: routed as default (`mode`) while a tr core records what it would do (/shadow).
    shadow,
    priority_enabled: snapshot.priority !== undefined,
    ...(snapshot.priority === undefined ? {} : { priority: priorityJson(snapshot.priority) }),
  };
}

/** Per-class queues and counters for /health (the policies and what each class holds now). */
function priorityJson(pr: PrioritySnapshot) {
  const classes: Record<string, unknown> = {};
  for (const [name, c] of Object.entries(pr.classes)) {
    classes[name] = {
      queued: c.queued,
      admissions: c.admissions,
      clamps: c.clamps,
      promotions: c.promotions,
      preemptions: c.preemptions,
    };
  }
  return { queue_policy: pr.queuePolicy, priority_policy: pr.priorityPolicy, classes };
}

function engineJson(m: BackendMetricsSample | null) {
  if (!m) return null;
  return {
    capacity_tokens: m.capacityTokens,
    kv_cache_usage: m.kvUsage,
    running: m.running,
    waiting: m.waiting,
    preemptions_total: m.preemptionsTotal,
    prefix_cache_queries_total: m.prefixCacheQueriesTotal,
    prefix_cache_hits_total: m.prefixCacheHitsTotal,
    prompt_tokens_total: m.promptTokensTotal,
    generation_tokens_total: m.generationTokensTotal,
    // null: the engine does not say whether it keeps evicted KV in host memory.
    host_kv_tier: m.hostKvTier ?? null,
    // null: the tier's size in tokens is not known (see --kv-bytes-per-token, --host-kv-tokens).
    host_kv_tokens: m.hostKvTokens ?? null,
  };
}

/** The engine's side next to the books (`remaining_tokens` is what admission reads). */
function truthJson(t: BackendView["truth"]) {
  if (t === null) return null;
  return {
    sampled_at: t.sampledAt,
    kv_cache_usage: t.kvUsage,
    running: t.running,
    waiting: t.waiting,
    preempting: t.preempting,
    pending_tokens: t.pendingTokens,
    full: t.full,
    room_tokens: t.roomTokens,
    gap_tokens: t.gapTokens,
  };
}

/**
 * The bounds on waiting as `/backends` shows them, on every backend's entry: the answer stays
 * keyed by backend, as ThunderAgent's is, and every backend waits by the same bounds.
 */
function boundsJson(b: TailFields | null) {
  if (b === null) return null;
  return {
    tail: b.tail,
    ageing_s: b.ageingMs / 1000,
    max_pause_s: b.maxPauseMs / 1000,
    tier_packing: b.tierPacking,
    overridden: [
      ...(b.boundsOverridden.ageing ? ["ageing"] : []),
      ...(b.boundsOverridden.maxPause ? ["max-pause"] : []),
      ...(b.boundsOverridden.tierPacking ? ["tier-packing"] : []),
    ],
  };
}

export function backendsJson(
  snapshot: SchedulerSnapshot,
  latest: (id: string) => { sample: BackendMetricsSample; at: number } | undefined,
  bounds: TailFields | null = null,
) {
  const waitingBounds = boundsJson(bounds);
  const out: Record<string, unknown> = {};
  for (const b of snapshot.backends as BackendView[]) {
    const fresh = latest(b.id);
    out[b.id] = {
      healthy: b.healthy,
      capacity_tokens: b.capacityTokens,
      admission_capacity_tokens: b.admissionCapacityTokens,
      pause_price: b.pausePrice,
      host_load_bytes_per_second: b.hostLoadBytesPerSecond,
      priority_scheduling: b.priorityScheduling,
      used_tokens: b.usedTokens,
      belief_room_tokens: b.beliefRoomTokens,
      remaining_tokens: b.remainingTokens,
      truth: truthJson(b.truth),
      lent_programs: b.lentPrograms,
      shared_tokens: b.sharedTokens,
      marked_tokens: b.markedTokens,
      reasoning_tokens: b.reasoningTokens,
      acting_tokens: b.actingTokens,
      active_programs: b.activePrograms,
      reasoning_programs: b.reasoningPrograms,
      acting_programs: b.actingPrograms,
      anonymous_in_flight: b.anonymousInFlight,
      engine: engineJson(fresh?.sample ?? b.lastMetrics),
      engine_polled_at: fresh?.at ?? null,
      waiting_bounds: waitingBounds,
    };
  }
  return out;
}

/** Milliseconds as seconds, to the millisecond; null stays null. */
const secondsOf = (ms: number | null) => (ms === null ? null : Math.round(ms) / 1000);

function durationsJson(d: DurationView) {
  return {
    count: d.count,
    total_s: secondsOf(d.totalMs),
    p50_s: secondsOf(d.p50Ms),
    max_s: secondsOf(d.maxMs),
  };
}

/** One decision of the shadow, its program id split from its caller's scope. */
export function shadowDecisionJson(d: ShadowDecision) {
  const scoped = d.programId === null ? null : splitProgramKey(d.programId);
  return {
    at: d.at,
    kind: d.kind,
    program_id: scoped?.programId ?? null,
    tenant: scoped?.tenant ?? null,
    request_id: d.requestId,
    backend: d.backend,
    reason: d.reason,
    waited_ms: d.waitedMs,
    actual_backend: d.actualBackend,
    changes_traffic: d.changesTraffic,
  };
}

/**
 * `GET /shadow`: what the tr shadow would have done since it started (src/shadow/shadow.ts),
 * beside what the engines went through meanwhile. `first_traffic_change` is when its books
 * began to drift from what tr would have seen: the figures after it are an estimate.
 */
export function shadowJson(s: ShadowSummary) {
  return {
    mode: "tr",
    routed_as: "default",
    since: s.since,
    running_s: secondsOf(Math.max(0, s.now - s.since)),
    events: s.events,
    errors: s.errors,
    decisions: s.decisions,
    first_traffic_change: s.firstChange === null ? null : shadowDecisionJson(s.firstChange),
    paused_programs: {
      now: s.paused.now,
      longest_now_s: secondsOf(s.paused.longestNowMs),
      pauses: s.paused.pauses,
      // Pause → resume pairs of the shadow: how long each program would have stayed paused.
      paused_for: durationsJson(s.paused.durations),
    },
    held_requests: {
      now: s.held.now,
      longest_now_s: secondsOf(s.held.longestNowMs),
      held: s.held.held,
      // How each hold ended: seated by the shadow, refused by it, or the real request ended
      // first (then its length is a lower bound).
      ended: s.held.ends,
      held_for: durationsJson(s.held.durations),
    },
    seats: {
      total: s.seats.total,
      elsewhere: s.seats.elsewhere,
      same: s.seats.same,
      unknown: s.seats.unknown,
    },
    engines: {
      ticks: s.engines.ticks,
      overflow_ticks: s.engines.overflowTicks,
      waiting_samples: s.engines.waitingSamples,
      peak_waiting: s.engines.peakWaiting,
      peak_kv_usage: s.engines.peakKvUsage,
      preemptions: s.engines.preemptions,
    },
    recent_decisions: s.recent.map(shadowDecisionJson),
  };
}
