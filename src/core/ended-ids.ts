import { lowerBudget } from "./budget-rules.ts";
import type { BudgetCarry, EndedId, ProgramRecord } from "./records.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * Ids of programs the router ended on its own (a budget, the likely-done rule, the idle lease),
 * remembered a while with what their budget had used: a request that names one again is a
 * client carrying on, which a budget must refuse, the likely-done rule must count as released
 * too early, and every end must leave under its old budget, never a fresh one.
 */

/** How long an ended id is remembered: the hour a spent budget's id stays refused. */
export const ENDED_ID_TTL_MS = 60 * 60_000;
/**
 * Ids remembered at most; the oldest are forgotten first, before their hour is over. The hour
 * alone bounds nothing: how many ids it holds is the rate at which the router ends programs,
 * and clients that never release theirs end every one by the idle lease. This many is 18
 * ends a second for the whole hour (a router of 10,000 live agents ending each within ten
 * minutes stays under it), and at ~250 bytes an entry (the id, its record, a budget's carry)
 * costs some 16 MB at most. Its size is `maitred_ended_programs_remembered`.
 */
export const ENDED_ID_LIMIT = 65_536;

export function rememberEnded(
  state: SchedulerState,
  id: string,
  why: EndedId["why"],
  carry: BudgetCarry | null = null,
): void {
  state.ended.delete(id);
  forgetOldest(state, ENDED_ID_LIMIT);
  const e: EndedId = { at: state.now, why, carry };
  state.ended.set(id, e);
  const order = state.endedOrder;
  order.ids.push(id);
  order.entries.push(e);
  // Ids taken back (a budget's client carrying on) leave stale places that reach the front only
  // with their hour: past twice the limit the queue is rebuilt from the map, whose own order is
  // age order too (an id remembered again is deleted first).
  if (order.ids.length - order.head > 2 * ENDED_ID_LIMIT) {
    order.ids = [...state.ended.keys()];
    order.entries = [...state.ended.values()];
    order.head = 0;
  }
}

/**
 * Forgets the ids whose hour is over (each tick): without it a router that stops ending
 * programs would keep its last ones, and count them, until it ends another.
 */
export function forgetExpiredEnds(state: SchedulerState): void {
  forgetOldest(state, Number.POSITIVE_INFINITY);
}

/**
 * Oldest first: ids past their hour, then any that leave fewer than one place below `limit`.
 * The age order is a queue beside the map, not the map's own order: iterating a map from its
 * front after many deletions there walks every deleted slot again, which cost some 8 µs an
 * end once 65,536 ids were remembered.
 */
function forgetOldest(state: SchedulerState, limit: number): void {
  const order = state.endedOrder;
  while (order.head < order.ids.length) {
    const id = order.ids[order.head];
    const e = order.entries[order.head];
    const current = state.ended.get(id) === e;
    if (current && state.now - e.at < ENDED_ID_TTL_MS && state.ended.size < limit) break;
    if (current) state.ended.delete(id);
    order.head++;
  }
  // Drop the places passed over once they are half the queue: O(1) an end, amortised.
  if (order.head > 1024 && order.head * 2 > order.ids.length) {
    order.ids.splice(0, order.head);
    order.entries.splice(0, order.head);
    order.head = 0;
  }
}

/** Why `id` was ended a short while ago; undefined when it was not (or long ago). */
export function endedRecently(state: SchedulerState, id: string): EndedId | undefined {
  const e = state.ended.get(id);
  if (e === undefined) return undefined;
  if (state.now - e.at < ENDED_ID_TTL_MS) return e;
  state.ended.delete(id);
  return undefined;
}

/** What `p`'s budget has used, to carry across its end; null when it has no budget. */
export function carryOf(p: ProgramRecord): BudgetCarry | null {
  if (p.budget === null) return null;
  return {
    budget: p.budget,
    steps: p.budgetSteps,
    usedTokens: p.usedTokens,
    startedAt: p.startedAt,
  };
}

/**
 * A new record for an id the router ended a while ago: it goes on under the budget it had, as
 * used, lowered by the one its request brings. Returns the entry, now forgotten.
 */
export function takeEnded(state: SchedulerState, p: ProgramRecord): EndedId | undefined {
  const e = endedRecently(state, p.id);
  if (e === undefined) return undefined;
  state.ended.delete(p.id);
  const c = e.carry;
  if (c !== null) {
    p.budget = lowerBudget(c.budget, p.budget ?? undefined);
    p.budgetSteps = c.steps;
    p.usedTokens = c.usedTokens;
    p.startedAt = c.startedAt;
  }
  return e;
}
