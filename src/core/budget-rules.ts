import type { ProgramBudget } from "./events.ts";

/**
 * The budgets a program may run under (`ProgramBudget`) and the one rule for combining two:
 * the lower wins, kind by kind. A leaf, so the core's public surface can export it.
 */

export const BUDGET_KINDS = ["steps", "tokens", "wall"] as const;
export type BudgetKind = (typeof BUDGET_KINDS)[number];

/** One budget of a program: its limit and what the program has used of it. */
export interface BudgetUse {
  limit: number;
  used: number;
}

/** What a program has used of each budget it has (wall in ms); absent kinds have no limit. */
export type BudgetView = Partial<Record<BudgetKind, BudgetUse>>;

/** Each kind's field in a `ProgramBudget`. */
export const LIMIT_OF: Record<BudgetKind, keyof ProgramBudget> = {
  steps: "steps",
  tokens: "tokens",
  wall: "wallMs",
};

/** The lower of the two budgets, kind by kind (a kind absent from both stays absent). */
export function lowerBudget(
  a: ProgramBudget | null,
  b: ProgramBudget | undefined,
): ProgramBudget | null {
  if (b === undefined) return a;
  if (a === null) return hasLimit(b) ? { ...b } : null;
  const out: ProgramBudget = { ...a };
  for (const kind of BUDGET_KINDS) {
    const key = LIMIT_OF[kind];
    const v = b[key];
    if (v !== undefined && !(v >= (out[key] ?? Number.POSITIVE_INFINITY))) out[key] = v;
  }
  return out;
}

function hasLimit(b: ProgramBudget): boolean {
  return b.steps !== undefined || b.tokens !== undefined || b.wallMs !== undefined;
}
