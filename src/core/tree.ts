import { Errors, type MaitredError } from "../errors.ts";
import { endedRecently } from "./ended-ids.ts";
import type { SchedulerEvent } from "./events.ts";
import { isPlaceable } from "./ledger.ts";
import { lendRoom } from "./lending.ts";
import type { BackendBook, ProgramRecord } from "./records.ts";
import { roomOn } from "./room.ts";
import type { SchedulerState } from "./scheduler-state.ts";

type Arrival = Extract<SchedulerEvent, { kind: "request_arrived" }>;

/**
 * Sub-agent trees. A request may name its program's parent (`parentProgramId`, already scoped
 * by caller): coding agents spawn sub-agents whose contexts begin with the parent's prefix,
 * while the parent waits on them. The tree is fixed by each program's first request and
 * changes what the core does in three places:
 *   - a new child is placed on its parent's backend when it fits there (its prefix is cached
 *     there), in the first placement and in the resume pass alike;
 *   - a parent in its tool call when a child starts is waiting on it: its room is lent at once
 *     (lending.ts), first of all so that the child fits beside it;
 *   - releasing a parent, for whatever reason (its client, its budget, the likely-done rule),
 *     ends its children, and theirs; a parent with live children is never idle.
 * A parent must be a live program of the same caller, named by the child's first request and
 * never changed; anything else is refused before anything changes.
 */

/** Why the request's parent cannot be taken; null when it can (or names none). */
export function parentError(state: SchedulerState, ev: Arrival): MaitredError | null {
  const parentId = ev.parentProgramId;
  if (parentId === undefined || ev.programId === null) return null;
  const bad = (why: string) => Errors.badRequest(why, "parent_program_id");
  if (parentId === ev.programId) return bad("A program cannot be its own parent.");
  const p = state.programs.get(ev.programId);
  if (p !== undefined) {
    if (p.parentProgramId === parentId) return null;
    const parent = state.programs.get(parentId);
    if (parent !== undefined && isAncestor(p, parent))
      return bad(
        "parent_program_id would make a cycle: the named parent descends from this program.",
      );
    return bad(
      p.parentProgramId === null
        ? "This program started without a parent; a program's parent is set by its first request."
        : "This program already has another parent; a program's parent is set by its first request.",
    );
  }
  if (!state.programs.has(parentId)) {
    // A tree its budget ended takes no new sub-agents either.
    const ended = endedRecently(state, parentId);
    if (ended !== undefined && ended.why !== "likely_done" && ended.why !== "idle")
      return Errors.budgetExceeded(ended.why, null, true);
    // Ids are scoped by caller: another caller's program is no program here.
    return bad("parent_program_id names no running program of this caller.");
  }
  return null;
}

/** Whether `a` is `b` or one of its ancestors. */
function isAncestor(a: ProgramRecord, b: ProgramRecord): boolean {
  for (let x: ProgramRecord | null = b; x !== null; x = x.parent) if (x === a) return true;
  return false;
}

/**
 * A new program joins its parent's tree (checked by `parentError`). A parent in its tool call
 * is waiting on this child: its room is lent now (tr).
 */
export function joinTree(state: SchedulerState, child: ProgramRecord): void {
  const id = child.parentProgramId;
  const parent = id === null ? undefined : state.programs.get(id);
  if (parent === undefined) return;
  child.parent = parent;
  parent.children.add(child);
  const { mode, lendAfterToolTimes } = state.config;
  if (
    mode === "tr" &&
    lendAfterToolTimes > 0 &&
    parent.backend !== null &&
    parent.status === "ACTING" &&
    !parent.lent &&
    !parent.markedForPause
  ) {
    lendRoom(state, parent, "waiting on its sub-agents");
  }
}

/** A program ends: it leaves its parent, and its children end with it (the caller releases). */
export function leaveTree(p: ProgramRecord): ProgramRecord[] {
  p.parent?.children.delete(p);
  p.parent = null;
  const children = [...p.children];
  p.children.clear();
  for (const c of children) c.parent = null;
  return children;
}

/**
 * The backend a never-placed child should go to: its parent's, where their shared prefix is
 * cached; null for any other program, or when the parent is not on a backend.
 */
export function parentBackendOf(p: ProgramRecord): BackendBook | null {
  if (p.placedOnce) return null;
  return p.parent?.backend ?? null;
}

/** Its parent's backend when the new child fits there now; null otherwise. */
export function parentBackendWithRoom(
  state: SchedulerState,
  p: ProgramRecord,
  need: number,
): BackendBook | null {
  const b = parentBackendOf(p);
  if (b === null || !isPlaceable(b)) return null;
  const room = roomOn(state, b);
  return room !== null && room >= need ? b : null;
}
