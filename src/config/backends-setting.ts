/**
 * The serve settings whose values name backends: `--backends` (base URLs, or `sim:N`),
 * `--host-kv-tokens` (each backend's host KV tier, where its engine does not say) and
 * `--engine-priority` (the backends whose engines schedule by priority).
 */
import { z } from "zod";
import type { PriorityPolarity } from "../core/records.ts";
import { PRIORITY_POLARITIES } from "../core/scheduler-constants.ts";
import { httpUrl, list } from "./values.ts";

/** Upper bound for `sim:N`: each simulated backend is a server in this process. */
const MAX_SIM_BACKENDS = 64;

/** What `--backends` gives: base URLs, or a count of simulated backends to start. */
export interface ParsedBackends {
  backends: string[];
  simBackends: number;
}

/**
 * `--backends`: comma-separated base URLs (no `/v1`), or `sim:N` to start N simulated backends
 * in-process. URLs lose a trailing slash because the URL is the backend's id everywhere.
 */
export const backendsSchema = list().transform((items, ctx): ParsedBackends => {
  const sim = items.length === 1 ? /^sim:(\d+)$/.exec(items[0]) : null;
  if (sim) {
    const n = Number(sim[1]);
    if (n < 1 || n > MAX_SIM_BACKENDS) {
      ctx.issues.push({
        code: "custom",
        message: `sim:N needs 1 ≤ N ≤ ${MAX_SIM_BACKENDS}, got ${n}`,
        input: items,
      });
      return z.NEVER;
    }
    return { backends: [], simBackends: n };
  }
  const backends: string[] = [];
  for (const item of items) {
    const r = httpUrl().safeParse(item);
    if (!r.success) {
      ctx.issues.push({
        code: "custom",
        message: r.error.issues[0].message,
        input: items,
      });
      return z.NEVER;
    }
    if (backends.includes(r.data)) {
      ctx.issues.push({ code: "custom", message: `lists ${r.data} twice`, input: items });
      return z.NEVER;
    }
    backends.push(r.data);
  }
  return { backends, simBackends: 0 };
});

/**
 * A value for every backend (`V`), or `URL=V,URL=V` naming them one by one (a backend not named
 * has none given): the shape of `--host-kv-tokens` and `--engine-priority`.
 */
export interface PerBackend<T> {
  all: T | null;
  byBackend: Record<string, T>;
}

/** The value a per-backend setting gives `backendId`, or null. */
export function valueFor<T>(setting: PerBackend<T> | null, backendId: string): T | null {
  return setting?.byBackend[backendId] ?? setting?.all ?? null;
}

function parsePerBackend<T>(raw: string, what: string, read: (raw: string) => T): PerBackend<T> {
  if (!raw.includes("=")) return { all: read(raw), byBackend: {} };
  const byBackend: Record<string, T> = {};
  for (const item of raw.split(",")) {
    const at = item.lastIndexOf("=");
    if (at < 0) throw new Error(`"${item}" is not URL=${what}`);
    const url = httpUrl().safeParse(item.slice(0, at).trim());
    if (!url.success) throw new Error(`"${item}": ${url.error.issues[0].message}`);
    if (url.data in byBackend) throw new Error(`names ${url.data} twice`);
    byBackend[url.data] = read(item.slice(at + 1));
  }
  return { all: null, byBackend };
}

/** `--host-kv-tokens`: tokens of KV each backend's host tier holds. */
export type HostKvTokens = PerBackend<number>;

function tokensOf(raw: string): number {
  const n = Number(raw.trim());
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`"${raw}" is not a whole number of tokens ≥ 1`);
  return n;
}

export const parseHostKvTokens = (raw: string): HostKvTokens =>
  parsePerBackend(raw, "tokens", tokensOf);

/**
 * `--engine-priority`: the backends whose engines schedule by priority (vLLM
 * `--scheduling-policy priority`: lower-first; SGLang `--enable-priority-scheduling`:
 * higher-first, or lower-first with `--schedule-low-priority-values-first`); a backend not
 * named is never sent the field.
 */
export type EnginePriority = PerBackend<PriorityPolarity>;

function polarityOf(raw: string): PriorityPolarity {
  const p = raw.trim();
  if (!(PRIORITY_POLARITIES as readonly string[]).includes(p))
    throw new Error(`"${raw}" is not lower-first or higher-first`);
  return p as PriorityPolarity;
}

export const parseEnginePriority = (raw: string): EnginePriority =>
  parsePerBackend(raw, "polarity", polarityOf);
