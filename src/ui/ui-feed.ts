/**
 * What the live page (`/ui`) shows, kept by the running router: the scheduler's own snapshot
 * (backends with the books beside the engine's figures, programs, class queues), the last
 * decisions the core logged (pause, resume, mark, lend, health) with their reasons, and a few
 * minutes of history sampled on the runtime's clock (steps per minute, KV use per backend as
 * booked and as the engine reports it). One frame is a plain JSON object; ui-routes.ts sends
 * it over SSE.
 */
import type { HoldView, ProgramView, SchedulerSnapshot } from "../core/api.ts";
import type { SchedulerEvent } from "../core/events.ts";
import { budgetJson, holdTimes, shadowDecisionJson } from "../proxy/admin-views.ts";
import { splitProgramKey } from "../proxy/program-scope.ts";
import type { Clock, TimerHandle } from "../runtime/clock.ts";
import type { RunLoopHooks } from "../runtime/run-loop.ts";
import type { ShadowSummary } from "../shadow/shadow.ts";

/** Decisions kept for the page (the newest first). */
const DECISIONS_KEPT = 50;
/** Programs listed in a frame: the paused ones first, longest paused first. */
const PROGRAMS_LISTED = 200;
/** A held program's place, wait and bounds as the page shows them (ms from the frame's time). */
export interface UiHold {
  position: number;
  waitedMs: number;
  roomInMs: number | null;
  seatInMs: number;
}

function uiHold(v: HoldView, now: number): UiHold {
  return { position: v.position, ...holdTimes(v, now) };
}

/** History: one point every SAMPLE_MS for HISTORY_POINTS points (10 minutes). */
const SAMPLE_MS = 2000;
const HISTORY_POINTS = 300;
const MINUTE_MS = 60_000;

export interface UiDecision {
  at: number;
  level: string;
  msg: string;
  programId: string | null;
  tenant: string | null;
  backend: string | null;
  why: string | null;
}

export interface UiHistory {
  /** Seconds since the epoch of the runtime's clock, for the charts' time axis. */
  t: number[];
  stepsPerMin: number[];
  /** Per backend: booked tokens ÷ capacity (the belief), and the engine's KV usage (truth). */
  belief: Record<string, (number | null)[]>;
  truth: Record<string, (number | null)[]>;
}

export interface UiFeed {
  /** Run-loop hooks that feed it: finished steps and the core's decisions. */
  hooks: RunLoopHooks;
  /** Starts sampling the history. */
  start(): void;
  stop(): void;
  frame(): Record<string, unknown>;
}

export interface UiFeedOptions {
  clock: Clock;
  snapshot(): SchedulerSnapshot;
  /** Programs with a held request, in queue order (the core's `holds()`). */
  holds(): HoldView[];
  isDraining(): boolean;
  /** `--shadow`: what the tr shadow would have done; absent when no shadow runs. */
  shadow?(): ShadowSummary;
}

/** The shadow's decisions listed on the page (the newest first). */
const SHADOW_DECISIONS_LISTED = 20;

/** The "shadow (tr)" panel: its counts and its latest decisions. */
function uiShadow(s: ShadowSummary) {
  return {
    since: s.since,
    events: s.events,
    errors: s.errors,
    decisions: s.decisions,
    firstChangeAt: s.firstChange?.at ?? null,
    pausedNow: s.paused.now,
    pauses: s.paused.pauses,
    pausedP50Ms: s.paused.durations.p50Ms,
    pausedMaxMs: s.paused.durations.maxMs,
    heldNow: s.held.now,
    held: s.held.held,
    heldP50Ms: s.held.durations.p50Ms,
    heldMaxMs: s.held.durations.maxMs,
    seats: s.seats,
    overflowTicks: s.engines.overflowTicks,
    engineTicks: s.engines.ticks,
    preemptions: s.engines.preemptions,
    peakKvUsage: s.engines.peakKvUsage,
    recent: s.recent.slice(0, SHADOW_DECISIONS_LISTED).map(shadowDecisionJson),
  };
}

const text = (v: unknown): string | null =>
  typeof v === "string" ? v : typeof v === "number" ? String(v) : null;

export function createUiFeed(o: UiFeedOptions): UiFeed {
  const decisions: UiDecision[] = [];
  /** Times of the steps that ended well in the last minute. */
  const stepEnds: number[] = [];
  const history: UiHistory = { t: [], stepsPerMin: [], belief: {}, truth: {} };
  let timer: TimerHandle | null = null;

  const stepsPerMin = (now: number): number => {
    while (stepEnds.length > 0 && (stepEnds[0] as number) <= now - MINUTE_MS) stepEnds.shift();
    return stepEnds.length;
  };

  function sample(): void {
    const now = o.clock.now();
    const snap = o.snapshot();
    history.t.push(now / 1000);
    history.stepsPerMin.push(stepsPerMin(now));
    for (const b of snap.backends) {
      history.belief[b.id] ??= history.t.slice(0, -1).map(() => null);
      history.truth[b.id] ??= history.t.slice(0, -1).map(() => null);
      const cap = b.capacityTokens;
      history.belief[b.id]?.push(cap !== null && cap > 0 ? b.usedTokens / cap : null);
      history.truth[b.id]?.push(b.truth?.kvUsage ?? null);
    }
    if (history.t.length > HISTORY_POINTS) {
      history.t.shift();
      history.stepsPerMin.shift();
      for (const v of Object.values(history.belief)) v.shift();
      for (const v of Object.values(history.truth)) v.shift();
    }
    timer = o.clock.setTimeout(sample, SAMPLE_MS);
  }

  const hooks: RunLoopHooks = {
    onEvent(e: SchedulerEvent) {
      if (e.kind === "request_finished" && e.outcome === "ok") stepEnds.push(e.now);
    },
    onLog(level, msg, fields) {
      const key = text(fields?.programId);
      const scoped = key === null ? null : splitProgramKey(key);
      decisions.unshift({
        at: o.clock.now(),
        level,
        msg,
        programId: scoped?.programId ?? null,
        tenant: scoped?.tenant ?? null,
        backend: text(fields?.backend),
        why: text(fields?.why ?? fields?.reason ?? fields?.rule),
      });
      if (decisions.length > DECISIONS_KEPT) decisions.pop();
    },
  };

  return {
    hooks,
    start() {
      if (timer === null) sample();
    },
    stop() {
      timer?.cancel();
      timer = null;
    },
    frame() {
      const now = o.clock.now();
      const snap = o.snapshot();
      const held = new Map<string, HoldView>();
      for (const v of o.holds()) held.set(v.programId, v);
      const programs = treeOrder(
        [...snap.programs].sort(
          (a, b) =>
            (b.pausedSince === null ? -1 : now - b.pausedSince) -
            (a.pausedSince === null ? -1 : now - a.pausedSince),
        ),
      );
      return {
        now,
        mode: snap.mode,
        draining: o.isDraining(),
        stepsPerMin: stepsPerMin(now),
        queueLength: snap.queueLength,
        heldPrograms: held.size,
        backends: snap.backends.map((b) => ({
          id: b.id,
          healthy: b.healthy,
          capacityTokens: b.capacityTokens,
          usedTokens: b.usedTokens,
          remainingTokens: b.remainingTokens,
          kvUsage: b.truth?.kvUsage ?? null,
          running: b.truth?.running ?? null,
          waiting: b.truth?.waiting ?? null,
          preempting: b.truth?.preempting ?? null,
          hostKvTier: b.lastMetrics?.hostKvTier ?? null,
          hostKvTokens: b.lastMetrics?.hostKvTokens ?? null,
          activePrograms: b.activePrograms,
          lentPrograms: b.lentPrograms,
        })),
        counts: {
          programs: snap.programs.length,
          reasoning: snap.programs.filter((p) => p.status === "REASONING").length,
          acting: snap.programs.filter((p) => p.status === "ACTING").length,
          paused: snap.programs.filter((p) => p.state === "PAUSED").length,
        },
        programs: programs.slice(0, PROGRAMS_LISTED).map(({ p, depth }) => {
          const { tenant, programId } = splitProgramKey(p.id);
          return {
            id: programId,
            tenant,
            // Its place in its sub-agent tree: 0 for a root, listed right under its parent.
            depth,
            subagents: p.children.length,
            status: p.status,
            state: p.state,
            tokens: p.totalTokens,
            backend: p.backend,
            steps: p.steps,
            pausedForMs: p.pausedSince === null ? null : now - p.pausedSince,
            hold: held.has(p.id) ? uiHold(held.get(p.id) as HoldView, now) : null,
            class: p.priorityClass ?? null,
            budget: budgetJson(p.budget),
          };
        }),
        classes:
          snap.priority === undefined
            ? null
            : Object.entries(snap.priority.classes).map(([name, c]) => ({
                name,
                queued: c.queued,
                preemptions: c.preemptions,
                promotions: c.promotions,
              })),
        decisions,
        history,
        shadow: o.shadow === undefined ? null : uiShadow(o.shadow()),
      };
    },
  };
}

/**
 * The programs as trees: each root in the given order (paused ones first), each followed by its
 * sub-agents, depth first. A program whose parent is not listed is a root.
 */
function treeOrder(programs: ProgramView[]): { p: ProgramView; depth: number }[] {
  const byId = new Map(programs.map((p) => [p.id, p]));
  const out: { p: ProgramView; depth: number }[] = [];
  const visit = (p: ProgramView, depth: number) => {
    out.push({ p, depth });
    for (const id of p.children) {
      const c = byId.get(id);
      if (c !== undefined) visit(c, depth + 1);
    }
  };
  for (const p of programs) {
    if (p.parentProgramId === null || !byId.has(p.parentProgramId)) visit(p, 0);
  }
  return out;
}
