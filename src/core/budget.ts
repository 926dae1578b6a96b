import { Errors } from "../errors.ts";
import {
  BUDGET_KINDS,
  type BudgetKind,
  type BudgetView,
  LIMIT_OF,
  lowerBudget,
} from "./budget-rules.ts";
import { endedRecently, rememberEnded } from "./ended-ids.ts";
import type { ProgramBudget } from "./events.ts";
import type { EndedId, ProgramRecord, RequestRecord } from "./records.ts";
import { releaseProgram } from "./release.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * Program budgets: steps, tokens and wall time a program may use. The check is at a step's
 * start: a request that would start a step past a budget is refused (429
 * `program_budget_exceeded`, naming the budget) and its program is released, so an agent stuck
 * in a loop stops costing room however its framework counts steps. A program keeps the lowest
 * budget it was ever given: leaving the budget out of a later request never raises it.
 */

/** What a budget has used so far: a live program's, or one carried across its end. */
interface Used {
  budgetSteps: number;
  usedTokens: number;
  startedAt: number;
}

function usedOf(state: SchedulerState, p: Used, kind: BudgetKind): number {
  if (kind === "steps") return p.budgetSteps;
  if (kind === "tokens") return p.usedTokens;
  return state.now - p.startedAt;
}

/** The first budget (steps, tokens, wall) a new step would pass; null = none. */
function passedBudget(
  state: SchedulerState,
  b: ProgramBudget | null,
  used: Used,
): BudgetKind | null {
  if (b === null) return null;
  for (const kind of BUDGET_KINDS) {
    const limit = b[LIMIT_OF[kind]];
    if (limit !== undefined && usedOf(state, used, kind) >= limit) return kind;
  }
  return null;
}

const isBudgetKind = (why: EndedId["why"]): why is BudgetKind =>
  why !== "likely_done" && why !== "idle";

/**
 * A request of `programId` wants to start a step. Its budget is merged into the program's;
 * when the program has used up a budget the request is refused and true returned: the program,
 * if live, is released, and its id and its sub-agents' stay refused a while. An id ended by a
 * budget a short while ago is refused again; one the router ended otherwise is checked against
 * the budget it carried.
 */
export function refuseOverBudget(
  state: SchedulerState,
  requestId: string,
  programId: string,
  budget: ProgramBudget | undefined,
): boolean {
  const p = state.programs.get(programId);
  if (p === undefined) {
    const ended = endedRecently(state, programId);
    if (ended === undefined) return false;
    if (isBudgetKind(ended.why)) {
      state.effects.reject(requestId, Errors.budgetExceeded(ended.why, null));
      return true;
    }
    const carry = ended.carry;
    if (carry === null) return false;
    const merged = lowerBudget(carry.budget, budget);
    const kind = passedBudget(state, merged, { ...carry, budgetSteps: carry.steps });
    if (kind === null) return false;
    state.effects.reject(
      requestId,
      Errors.budgetExceeded(kind, merged?.[LIMIT_OF[kind]] as number),
    );
    state.budgetsExhausted[kind]++;
    rememberEnded(state, programId, kind);
    return true;
  }
  p.budget = lowerBudget(p.budget, budget);
  const kind = passedBudget(state, p.budget, p);
  if (kind === null) return false;
  const limit = p.budget?.[LIMIT_OF[kind]] as number;
  state.effects.reject(requestId, Errors.budgetExceeded(kind, limit));
  state.budgetsExhausted[kind]++;
  // The tree ends with it, and none of it may carry on under a fresh budget (tree.ts).
  for (const d of descendants(p)) rememberEnded(state, d.id, kind);
  rememberEnded(state, programId, kind);
  releaseProgram(state, p, "budget");
  return true;
}

function descendants(p: ProgramRecord): ProgramRecord[] {
  const out: ProgramRecord[] = [];
  for (let i = -1; i < out.length; i++) for (const c of (i < 0 ? p : out[i]).children) out.push(c);
  return out;
}

/**
 * A request of `p` ended: the tokens the engine worked on count against its budget (engine
 * usage when it came, else the estimate once the engine produced a token; nothing for a
 * request the engine never started).
 */
export function chargeTokens(p: ProgramRecord, r: RequestRecord): void {
  if (r.usageSeen || r.prefilled) p.usedTokens += r.tokens;
}

/** Each budget of `p` with its use; undefined when it has none. */
export function budgetView(state: SchedulerState, p: ProgramRecord): BudgetView | undefined {
  const b = p.budget;
  if (b === null) return undefined;
  const view: BudgetView = {};
  for (const kind of BUDGET_KINDS) {
    const limit = b[LIMIT_OF[kind]];
    if (limit !== undefined) view[kind] = { limit, used: usedOf(state, p, kind) };
  }
  return view;
}
