import { lowerBudget } from "./budget-rules.ts";
import type { BudgetCarry, EndedId, ProgramRecord } from "./records.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * Ids of programs the router ended on its own (a budget, the likely-done rule, the idle lease),
 * remembered a while with what their budget had used: a request that names one again is a
 * client carrying on, which a budget must refuse, the likely-done rule must count as released
 * too early, and every end must leave under its old budget, never a fresh one.
 */

/** How long an ended id is remembered. */
export const ENDED_ID_TTL_MS = 60 * 60_000;
/** Ids remembered at most; the oldest are forgotten first. */
export const ENDED_ID_LIMIT = 65_536;

export function rememberEnded(
  state: SchedulerState,
  id: string,
  why: EndedId["why"],
  carry: BudgetCarry | null = null,
): void {
  // Oldest first: entries past their time, then any beyond the bound.
  for (const [old, e] of state.ended) {
    if (state.now - e.at < ENDED_ID_TTL_MS && state.ended.size < ENDED_ID_LIMIT) break;
    state.ended.delete(old);
  }
  state.ended.delete(id);
  state.ended.set(id, { at: state.now, why, carry });
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
