/**
 * A request's priority class and tenant, resolved before the core hears of it:
 *   1. the requested class is header `x-priority`, else a STRING body field `priority`; an
 *      integer `priority` is vLLM's own scheduling field and
 *      is forwarded untouched, a string one is maitred's and is removed from the body (vLLM
 *      would answer it with 400);
 *   2. the tenant is the one a mapped bearer API key names (`Authorization: Bearer <key>`),
 *      else header `x-tenant-id` when the config trusts it (off by default: any client can
 *      write a header, while the operator handed out the key);
 *   3. no known tenant gets the config's `default_max_class`; once any key is mapped, it gets
 *      `anonymous_max_class` instead, lowered to the lowest ceiling a mapped key gives, so a
 *      caller never gets more by sending less;
 *   4. `resolveRequestClass` (the core's one header contract) parses, answers an unknown class
 *      with 400 and clamps the class down to the tenant's maximum, never up.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { RouterPriority } from "../config/parse-priority.ts";
import { clampClass, type PriorityClass, resolveRequestClass } from "../core/api.ts";

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

const BEARER = /^\s*bearer\s+(\S+)\s*$/i;

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function createClassResolver(config: RouterPriority): ClassResolver {
  // Maps, not the config's plain objects: a tenant named `constructor` must not find
  // Object.prototype's.
  const tenants = new Map(Object.entries(config.tenants));
  const keys = new Map(Object.entries(config.apiKeys));
  const { defaultMaxClass, trustTenantHeader } = config;
  const ceilingOf = (tenant: string) => tenants.get(tenant) ?? defaultMaxClass;
  // 3: no key may be worth less than sending none.
  let unknownMax = keys.size === 0 ? defaultMaxClass : config.anonymousMaxClass;
  for (const tenant of keys.values()) unknownMax = clampClass(unknownMax, ceilingOf(tenant));

  function tenantMax(headers: IncomingHttpHeaders): PriorityClass {
    if (keys.size > 0) {
      const auth = header(headers, "authorization");
      const key = auth === undefined ? undefined : BEARER.exec(auth)?.[1];
      const tenant = key === undefined ? undefined : keys.get(key);
      if (tenant !== undefined) return ceilingOf(tenant); // 2
    }
    if (trustTenantHeader) {
      const id = header(headers, "x-tenant-id")?.trim();
      const ceiling = id ? tenants.get(id) : undefined;
      if (ceiling !== undefined) return ceiling; // 2
    }
    return unknownMax; // 3
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
