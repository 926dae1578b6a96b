/**
 * The `budgets:` section of the config file: the budget every program runs under by default,
 * and a budget per tenant (tenants as the `priority:` section names them). A request may lower
 * its program's budget with the `x-maitred-budget` header, never raise it.
 *
 *   budgets:
 *     default: { steps: 200, tokens: 5000000, wall: 2h }
 *     tenants:
 *       ci-bots: { steps: 50, wall: 30m }
 */
import { z } from "zod";
import type { ProgramBudget } from "../core/api.ts";
import { duration, integer } from "./values.ts";

export interface RouterBudgets {
  /** Programs of a caller without a budget of its own; null = no limit. */
  default: ProgramBudget | null;
  /** Tenant id → its programs' budget (instead of the default). */
  tenants: Record<string, ProgramBudget>;
}

export const DEFAULT_BUDGETS: RouterBudgets = { default: null, tenants: {} };

/** Largest step or token budget accepted: beyond it a budget is no limit at all. */
export const MAX_BUDGET = 1e15;

const budgetSchema = z
  .strictObject(
    {
      steps: integer(1, MAX_BUDGET)
        .optional()
        .meta({ description: "requests that start a step (retries are the same step)" }),
      tokens: integer(1, MAX_BUDGET)
        .optional()
        .meta({ description: "prompt + completion tokens of all its requests" }),
      wall: duration().optional().meta({ description: "time since the program's first request" }),
    },
    {
      error: (iss) =>
        iss.code === "unrecognized_keys"
          ? "unknown budget; known: steps, tokens, wall"
          : "must be a mapping of steps, tokens and wall",
    },
  )
  .transform((b): ProgramBudget => {
    const out: ProgramBudget = {};
    if (b.steps !== undefined) out.steps = b.steps;
    if (b.tokens !== undefined) out.tokens = b.tokens;
    if (b.wall !== undefined) out.wallMs = b.wall;
    return out;
  });

export const budgetsSchema = z
  .strictObject(
    {
      default: budgetSchema
        .nullish()
        .meta({ description: "budget of every program whose tenant has none of its own" }),
      tenants: z
        .record(z.string(), budgetSchema, {
          error: "must be a mapping of tenant ids to their budgets",
        })
        .nullish(),
    },
    {
      error: (iss) =>
        iss.code === "unrecognized_keys"
          ? "unknown setting; known: default, tenants"
          : "must be a mapping with default and tenants",
    },
  )
  .nullable()
  .transform(
    (doc): RouterBudgets => ({
      default: doc?.default ?? null,
      tenants: { ...(doc?.tenants ?? {}) },
    }),
  );

/** Tenants given a budget that the `priority:` section does not name: no caller can be them. */
export function unknownBudgetTenants(
  budgets: RouterBudgets,
  tenants: Record<string, unknown>,
): string[] {
  return Object.keys(budgets.tenants).filter((t) => !Object.hasOwn(tenants, t));
}
