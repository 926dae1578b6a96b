/**
 * Who is calling: the tenant a request names, the one identity rule that both the priority
 * ceilings (request-class.ts) and the program-id scope (program-scope.ts) read.
 *   - a bearer API key mapped in the config (`Authorization: Bearer <key>`) names its tenant;
 *   - else header `x-tenant-id` names a configured tenant, only when the config trusts it (off
 *     by default: any client can write a header, while the operator hands out the keys);
 *   - else the caller is anonymous (null): no key, an unmapped key, or an untrusted header.
 * With no key mapped and the header not trusted, every caller is anonymous, which is the
 * single-operator setup an OpenAI client or a ThunderAgent harness expects.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { RouterPriority } from "../config/priority-section.ts";
import { firstHeader as header } from "./headers.ts";

export interface CallerResolver {
  /** The tenant `headers` name, or null for an anonymous caller. */
  tenantOf(headers: IncomingHttpHeaders): string | null;
}

const BEARER = /^\s*bearer\s+(\S+)\s*$/i;

export function createCallerResolver(
  config: Pick<RouterPriority, "tenants" | "apiKeys" | "trustTenantHeader">,
): CallerResolver {
  // Maps, not the config's plain objects: a tenant named `constructor` must not find
  // Object.prototype's.
  const tenants = new Map(Object.entries(config.tenants));
  const keys = new Map(Object.entries(config.apiKeys));
  const { trustTenantHeader } = config;
  return {
    tenantOf(headers) {
      if (keys.size > 0) {
        const auth = header(headers, "authorization");
        const key = auth === undefined ? undefined : BEARER.exec(auth)?.[1];
        const tenant = key === undefined ? undefined : keys.get(key);
        if (tenant !== undefined) return tenant;
      }
      if (trustTenantHeader) {
        const id = header(headers, "x-tenant-id")?.trim();
        if (id && tenants.has(id)) return id;
      }
      return null;
    },
  };
}
