import type { EndedId } from "./records.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * Ids of programs the router ended on its own (a budget, the likely-done rule), remembered a
 * while: a request that names one again is a client carrying on, which a budget must refuse and
 * the likely-done rule must count as released too early.
 */

/** How long an ended id is remembered. */
export const ENDED_ID_TTL_MS = 60 * 60_000;
/** Ids remembered at most; the oldest are forgotten first. */
export const ENDED_ID_LIMIT = 65_536;

export function rememberEnded(state: SchedulerState, id: string, why: EndedId["why"]): void {
  // Oldest first: entries past their time, then any beyond the bound.
  for (const [old, e] of state.ended) {
    if (state.now - e.at < ENDED_ID_TTL_MS && state.ended.size < ENDED_ID_LIMIT) break;
    state.ended.delete(old);
  }
  state.ended.delete(id);
  state.ended.set(id, { at: state.now, why });
}

/** Why `id` was ended a short while ago; undefined when it was not (or long ago). */
export function endedRecently(state: SchedulerState, id: string): EndedId | undefined {
  const e = state.ended.get(id);
  if (e === undefined) return undefined;
  if (state.now - e.at < ENDED_ID_TTL_MS) return e;
  state.ended.delete(id);
  return undefined;
}
