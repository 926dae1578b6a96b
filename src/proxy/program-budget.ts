/**
 * The budget a request asks its program to run under: its caller's configured budget (the
 * config file's `budgets:` section), lowered by the request's `x-maitred-budget` header. The
 * core keeps, per program, the lowest budget any of its requests brought, and enforces it.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { RouterBudgets } from "../config/budget-section.ts";
import { MAX_BUDGET } from "../config/budget-section.ts";
import { durationTextMs } from "../config/values.ts";
import { lowerBudget, type ProgramBudget } from "../core/api.ts";
import { Errors } from "../errors.ts";
import { firstHeader } from "./headers.ts";

export const BUDGET_HEADER = "x-maitred-budget";

export interface BudgetResolver {
  /** The budget of a request of `tenant` (null = anonymous caller); undefined = none. */
  budgetOf(tenant: string | null, headers: IncomingHttpHeaders): ProgramBudget | undefined;
}

/**
 * `keysMapped`: API keys (or a trusted `x-tenant-id`) name tenants, so a caller that names none
 * may be a tenant that left its key or header out; such a caller gets the lowest of the default
 * and every tenant's budget, so that sending less never gets more.
 */
export function createBudgetResolver(budgets: RouterBudgets, keysMapped: boolean): BudgetResolver {
  const tenants = new Map(Object.entries(budgets.tenants));
  let anonymous = budgets.default;
  if (keysMapped) for (const b of tenants.values()) anonymous = lowerBudget(anonymous, b);
  return {
    budgetOf(tenant, headers) {
      const configured = tenant === null ? anonymous : (tenants.get(tenant) ?? budgets.default);
      const raw = firstHeader(headers, BUDGET_HEADER);
      const asked = raw === undefined ? undefined : parseBudgetHeader(raw);
      return lowerBudget(configured, asked) ?? undefined;
    },
  };
}

const ITEM = /^\s*([a-z]+)\s*=\s*(\S+)\s*$/i;
const INTEGER = /^[0-9]+$/;

/**
 * `steps=50, tokens=2000000, wall=30m`: any of the three, each once; steps and tokens whole
 * numbers ≥ 1, wall a duration (a bare number is seconds). Anything else is a 400 naming what
 * is wrong.
 */
export function parseBudgetHeader(text: string): ProgramBudget {
  const bad = (why: string) =>
    Errors.badRequest(
      `${BUDGET_HEADER} ${why}; expected e.g. "steps=50, tokens=2000000, wall=30m".`,
      BUDGET_HEADER,
    );
  const out: ProgramBudget = {};
  const items = text.split(",");
  for (const item of items) {
    const m = ITEM.exec(item);
    if (m === null) throw bad(`has "${item.trim()}", not name=value`);
    const name = m[1].toLowerCase();
    const value = m[2];
    if (name === "steps" || name === "tokens") {
      if (out[name] !== undefined) throw bad(`gives ${name} twice`);
      const n = INTEGER.test(value) ? Number(value) : Number.NaN;
      if (!(n >= 1 && n <= MAX_BUDGET))
        throw bad(`${name} must be a whole number from 1 to ${MAX_BUDGET}`);
      out[name] = n;
    } else if (name === "wall") {
      if (out.wallMs !== undefined) throw bad("gives wall twice");
      const ms = durationTextMs(value);
      if (ms === null || ms <= 0) throw bad("wall must be a duration > 0 (90, 90s, 30m, 2h)");
      out.wallMs = ms;
    } else {
      throw bad(`has an unknown budget "${name}" (known: steps, tokens, wall)`);
    }
  }
  return out;
}
