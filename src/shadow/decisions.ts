/**
 * A scheduler core's decisions, read off its run loop's hooks: where it seated each request,
 * which requests it held or refused, which programs it paused, marked, resumed or lent the room
 * of, each with its reason. The same recorder reads the shadow core's own loop
 * (src/shadow/shadow.ts) and, in tests, a tr router's loop, so the two lists can be compared
 * item by item.
 *
 * The core says most of this in its decision logs (program-moves.ts, pause-step.ts,
 * lending.ts, resume.ts); a seat is its `dispatch` effect and a hold is what is left when an
 * arriving request was neither dispatched nor refused. The run loop applies effects after the
 * core returns and reports the event last, so the decisions of one event are collected first
 * and given out when the event is reported: by then the arriving request's program is known
 * and a held request is still waiting in the loop's table.
 */
import type { SchedulerEvent } from "../core/events.ts";
import type { PendingRequest } from "../runtime/request-table.ts";
import type { RunLoopHooks } from "../runtime/run-loop.ts";

/** Every kind of decision, a bounded set (the `kind` label of the shadow's metrics). */
export const DECISION_KINDS = [
  "seat",
  "hold",
  "reject",
  "preempt",
  "pause",
  "mark",
  "resume",
  "overdue_resume",
  "forced_resume",
  "idle_resume",
  "lend",
] as const;
export type DecisionKind = (typeof DECISION_KINDS)[number];

export interface Decision {
  /** Event time (ms) of the event during which the core decided. */
  at: number;
  kind: DecisionKind;
  /** The core's program key (a tenant's program is `<tenant>\u001f<id>`); null when anonymous. */
  programId: string | null;
  /** seat, hold, reject: the request; null for program decisions. */
  requestId: string | null;
  backend: string | null;
  reason: string | null;
  /**
   * seat: how long the request was held first (the core's own count); a resume: how long its
   * program was paused, when its pause was seen. null otherwise.
   */
  waitedMs: number | null;
}

/** What the recorder reads of the loop it watches, once the event has been handled. */
export interface DecisionSource {
  requests: { get(id: string): Pick<PendingRequest, "status"> | undefined };
}

type Pending = Omit<Decision, "at">;

const text = (v: unknown): string | null =>
  typeof v === "string" ? v : typeof v === "number" ? String(v) : null;
const seconds = (ms: unknown): string =>
  typeof ms === "number" ? `${(ms / 1000).toFixed(1)} s` : "?";

/**
 * Hooks that turn a run loop's effects and the core's decision logs into decisions, in the
 * order the core made them within each event. `source` is read lazily: the loop exists only
 * after it was given these hooks.
 */
export function createDecisionRecorder(
  source: () => DecisionSource,
  onDecision: (d: Decision) => void,
): RunLoopHooks {
  /** Program of each live request (from its arrival to its end): a dispatch names only the request. */
  const programOf = new Map<string, string | null>();
  /** When each paused program was paused (event time), for the length of its pause. */
  const pausedAt = new Map<string, number>();
  let pending: Pending[] = [];
  /** Why the next resume happens, said by the log line the resume pass writes before it. */
  let context: { kind: DecisionKind; reason: string } | null = null;
  let now = Number.NEGATIVE_INFINITY;

  const add = (d: Pending) => pending.push(d);
  const program = (fields: Record<string, unknown> | undefined) => text(fields?.programId);

  function onLog(_level: string, msg: string, fields: Record<string, unknown> | undefined): void {
    const programId = program(fields);
    const backend = text(fields?.backend);
    const why = text(fields?.why);
    switch (msg) {
      case "program paused":
        add({ kind: "pause", programId, requestId: null, backend, reason: why, waitedMs: null });
        return;
      case "program marked for pause":
        add({ kind: "mark", programId, requestId: null, backend, reason: why, waitedMs: null });
        return;
      case "idle program's room lent":
        add({ kind: "lend", programId, requestId: null, backend, reason: why, waitedMs: null });
        return;
      case "program preempted":
        add({
          kind: "preempt",
          programId,
          requestId: null,
          backend,
          reason: `for a ${text(fields?.byClass) ?? "higher"} class request`,
          waitedMs: null,
        });
        return;
      case "overdue program seated":
        context = {
          kind: "overdue_resume",
          reason: `overdue, waited ${seconds(fields?.waitedMs)}${fields?.madeRoom === true ? ", room made" : ""}`,
        };
        return;
      case "waiting program seated on an idle backend":
        context = { kind: "idle_resume", reason: "seated on an idle backend" };
        return;
      case "program resumed":
      case "program force-resumed": {
        // The resume pass says why first (resume.ts); the move itself carries `migrated`.
        if (!(fields !== undefined && "migrated" in fields)) {
          context = {
            kind: "forced_resume",
            reason: `max pause, waited ${seconds(fields?.waitedMs)}`,
          };
          return;
        }
        const forced = msg === "program force-resumed";
        const kind: DecisionKind = forced ? "forced_resume" : (context?.kind ?? "resume");
        const reason =
          context?.reason ??
          (forced ? "max pause" : fields.migrated === true ? "room on another backend" : "room");
        context = null;
        add({ kind, programId, requestId: null, backend, reason, waitedMs: null });
        return;
      }
      case "program released":
        if (programId !== null) pausedAt.delete(programId);
        return;
      default:
    }
  }

  // Why, not where: its place in the queue would cost a walk of every held program per hold.
  function holdReason(programId: string | null): string {
    return programId !== null && pausedAt.has(programId) ? "program paused" : "waiting for room";
  }

  function flush(event: SchedulerEvent): void {
    now = Math.max(now, event.now);
    if (event.kind === "request_arrived") programOf.set(event.requestId, event.programId);
    const list = pending;
    pending = [];
    context = null;
    for (const d of list) {
      const programId =
        d.programId ?? (d.requestId === null ? null : (programOf.get(d.requestId) ?? null));
      let waitedMs = d.waitedMs;
      if (programId !== null) {
        if (d.kind === "pause") pausedAt.set(programId, now);
        else if (d.kind.endsWith("resume")) {
          const since = pausedAt.get(programId);
          pausedAt.delete(programId);
          waitedMs = since === undefined ? null : now - since;
        }
      }
      onDecision({ ...d, at: now, programId, waitedMs });
    }
    if (
      event.kind === "request_arrived" &&
      source().requests.get(event.requestId)?.status === "waiting"
    ) {
      onDecision({
        at: now,
        kind: "hold",
        programId: event.programId,
        requestId: event.requestId,
        backend: null,
        reason: holdReason(event.programId),
        waitedMs: null,
      });
    }
    if (event.kind === "request_finished") programOf.delete(event.requestId);
  }

  return {
    onLog,
    onDispatch(requestId, grant) {
      add({
        kind: "seat",
        programId: null,
        requestId,
        backend: grant.backendId,
        reason: grant.pausedMs > 0 ? "held request seated" : "room",
        waitedMs: grant.pausedMs,
      });
    },
    onReject(requestId, error) {
      add({
        kind: "reject",
        programId: null,
        requestId,
        backend: null,
        reason: error.code,
        waitedMs: null,
      });
    },
    onEvent: flush,
  };
}
