/**
 * A request's priority class and tenant, resolved before the core hears of it:
 *   1. the requested class is header `x-priority`, else a STRING body field `priority`; an
 *      integer `priority` is vLLM's own scheduling field and
 *      is forwarded untouched, a string one is maitred's and is removed from the body (vLLM
 *      would answer it with 400);
 *   2. the caller's tenant (caller.ts: a mapped bearer API key, or a trusted `x-tenant-id`)
 *      gives the ceiling its config sets;
 *   3. an anonymous caller gets the config's `default_max_class`; once any key is mapped, it gets
 *      `anonymous_max_class` instead, lowered to the lowest ceiling a mapped key gives, so a
 *      caller never gets more by sending less;
 *   4. `resolveRequestClass` (the core's one header contract) parses, answers an unknown class
 *      with 400 and clamps the class down to the tenant's maximum, never up.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { RouterPriority } from "../config/priority-section.ts";
import { clampClass, type PriorityClass, resolveRequestClass } from "../core/api.ts";
import { type CallerResolver, createCallerResolver } from "./caller.ts";
import { firstHeader as header } from "./headers.ts";

export interface RequestClass {
  priorityClass: PriorityClass;
  /** The tenant's ceiling lowered the requested class. */
  clamped: boolean;
  /** A string `priority` field was removed from the body. */
  stripped: boolean;
}

export interface ClassResolver {
  /** Resolve, and remove maitred's `priority` field from `body` in place; throws 400. */
  resolve(body: Record<string, unknown>, headers: IncomingHttpHeaders): RequestClass;
}

export function createClassResolver(
  config: RouterPriority,
  callers: CallerResolver = createCallerResolver(config),
): ClassResolver {
  const tenants = new Map(Object.entries(config.tenants));
  const { defaultMaxClass } = config;
  const ceilingOf = (tenant: string) => tenants.get(tenant) ?? defaultMaxClass;
  // 3: no key may be worth less than sending none.
  let unknownMax =
    Object.keys(config.apiKeys).length === 0 ? defaultMaxClass : config.anonymousMaxClass;
  for (const tenant of Object.values(config.apiKeys))
    unknownMax = clampClass(unknownMax, ceilingOf(tenant));

  function tenantMax(headers: IncomingHttpHeaders): PriorityClass {
    const tenant = callers.tenantOf(headers);
    return tenant === null ? unknownMax : ceilingOf(tenant); // 2, 3
  }

  return {
    resolve(body, headers) {
      const fromBody = body.priority;
      const stripped = typeof fromBody === "string"; // 1
      if (stripped) delete body.priority;
      const fromHeader = header(headers, "x-priority");
      const useHeader = fromHeader !== undefined && fromHeader.trim() !== "";
      const result = resolveRequestClass(
        useHeader ? fromHeader : stripped ? fromBody : undefined,
        tenantMax(headers),
        useHeader ? "x-priority" : "priority",
      ); // 4
      if (!result.ok) throw result.error;
      return { priorityClass: result.priorityClass, clamped: result.clamped, stripped };
    },
  };
}
