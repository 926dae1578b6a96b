import { Errors, type MaitredError } from "../../errors.ts";

/**
 * Priority classes: strictly ordered, highest first. Both runtimes
 * resolve a request's class with these helpers before handing it to the core, so the header
 * contract (parse, validate, clamp) lives in one place.
 */
export const PRIORITY_CLASSES = ["system", "interactive", "default", "bulk"] as const;

export type PriorityClass = (typeof PRIORITY_CLASSES)[number];

/** A request with no class header or body field gets this class. */
export const DEFAULT_PRIORITY_CLASS: PriorityClass = "default";

/** Position in `PRIORITY_CLASSES`: 0 = system (highest) … 3 = bulk (lowest). */
export type ClassIndex = number;

export const CLASS_COUNT = PRIORITY_CLASSES.length;
export const DEFAULT_CLASS_INDEX: ClassIndex = PRIORITY_CLASSES.indexOf(DEFAULT_PRIORITY_CLASS);

export function isPriorityClass(value: unknown): value is PriorityClass {
  return typeof value === "string" && (PRIORITY_CLASSES as readonly string[]).includes(value);
}

export function classIndex(cls: PriorityClass): ClassIndex {
  return PRIORITY_CLASSES.indexOf(cls);
}

/**
 * A class name as a client or a config file spells it: case-insensitive, surrounding blanks
 * ignored. Returns null for anything that is not a class name (the caller answers 400).
 */
export function parsePriorityClass(raw: unknown): PriorityClass | null {
  if (typeof raw !== "string") return null;
  const name = raw.trim().toLowerCase();
  return isPriorityClass(name) ? name : null;
}

/**
 * The tenant clamp: a requested class above the tenant's ceiling is lowered to it, never raised.
 */
export function clampClass(requested: PriorityClass, tenantMax: PriorityClass): PriorityClass {
  return classIndex(requested) < classIndex(tenantMax) ? tenantMax : requested;
}

export type RequestClassResult =
  | { ok: true; priorityClass: PriorityClass; clamped: boolean; requested: PriorityClass }
  | { ok: false; error: MaitredError };

/**
 * A request's effective class from its raw `x-priority` header or `priority` body field and its
 * tenant's ceiling. Cases:
 *   1. absent (undefined, null or blank) → `default`;
 *   2. not a class name → 400 bad_request naming `param`;
 *   3. otherwise the name, clamped down to `tenantMax` (`clamped` says whether it was lowered).
 */
export function resolveRequestClass(
  raw: unknown,
  tenantMax: PriorityClass = "system",
  param = "priority",
): RequestClassResult {
  let requested: PriorityClass = DEFAULT_PRIORITY_CLASS; // 1
  if (raw !== undefined && raw !== null && !(typeof raw === "string" && raw.trim() === "")) {
    const parsed = parsePriorityClass(raw);
    if (parsed === null) {
      const shown = typeof raw === "string" ? raw : typeof raw;
      return {
        ok: false,
        error: Errors.badRequest(
          `Unknown priority class "${shown}"; expected one of ${PRIORITY_CLASSES.join(", ")}.`,
          param,
        ),
      }; // 2
    }
    requested = parsed;
  }
  const priorityClass = clampClass(requested, tenantMax); // 3
  return { ok: true, priorityClass, clamped: priorityClass !== requested, requested };
}
