/**
 * Parsers for raw configuration values. A value arrives as a string (flag, environment twin) or
 * as a YAML scalar; every parser accepts both and throws a `ConfigError` naming the field.
 */
import { ConfigError } from "../errors.ts";

/** Where a raw value came from, so an error can say which input to fix. */
export interface ValueSource {
  field: string;
  /** e.g. `--port`, `MAITRED_PORT`, `config.yaml` */
  origin: string;
}

export function fail(src: ValueSource, message: string, raw: unknown): never {
  throw new ConfigError(src.field, `${message}, got ${JSON.stringify(raw)} (from ${src.origin})`);
}

export function parseNumber(raw: unknown, src: ValueSource): number {
  const n = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw.trim()) : NaN;
  if (typeof raw === "string" && raw.trim() === "") fail(src, "must be a number", raw);
  if (!Number.isFinite(n)) fail(src, "must be a number", raw);
  return n;
}

export function parseNonNegative(raw: unknown, src: ValueSource): number {
  const n = parseNumber(raw, src);
  if (n < 0) fail(src, "must be ≥ 0", raw);
  return n;
}

/** A YAML mapping (structured, file-only settings). */
export function parseMapping(raw: unknown, src: ValueSource): Record<string, unknown> {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return fail(src, "must be a mapping", raw);
  }
  return raw as Record<string, unknown>;
}

export function parseInteger(raw: unknown, src: ValueSource, min: number, max: number): number {
  const n = parseNumber(raw, src);
  if (!Number.isInteger(n) || n < min || n > max) {
    fail(src, `must be an integer between ${min} and ${max}`, raw);
  }
  return n;
}

export function parseBoolean(raw: unknown, src: ValueSource): boolean {
  if (typeof raw === "boolean") return raw;
  if (typeof raw === "string") {
    const s = raw.trim().toLowerCase();
    if (["1", "true", "yes", "on"].includes(s)) return true;
    if (["0", "false", "no", "off"].includes(s)) return false;
  }
  return fail(src, "must be a boolean (true/false)", raw);
}

export function parseEnum<T extends string>(
  raw: unknown,
  src: ValueSource,
  values: readonly T[],
): T {
  if (typeof raw === "string" && (values as readonly string[]).includes(raw.trim())) {
    return raw.trim() as T;
  }
  return fail(src, `must be one of ${values.join(", ")}`, raw);
}

export function parseString(raw: unknown, src: ValueSource): string {
  if (typeof raw === "string" && raw.trim() !== "") return raw.trim();
  if (typeof raw === "number") return String(raw);
  return fail(src, "must be a non-empty string", raw);
}

/** A comma list (flag/env) or a YAML sequence of strings. */
export function parseList(raw: unknown, src: ValueSource): string[] {
  const items = Array.isArray(raw) ? raw : typeof raw === "string" ? raw.split(",") : null;
  if (items === null) return fail(src, "must be a comma-separated list", raw);
  const out = items.map((x) => (typeof x === "string" ? x.trim() : x));
  if (out.length === 0 || out.some((x) => typeof x !== "string" || x === "")) {
    fail(src, "must be a non-empty list of non-empty strings", raw);
  }
  return out as string[];
}

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A duration in milliseconds. A bare number is seconds, as ThunderAgent's flags are
 * (`--scheduler-interval 5.0`); a suffix `ms`, `s`, `m` or `h` picks the unit.
 */
export function parseDurationMs(raw: unknown, src: ValueSource, allowZero = false): number {
  let ms: number;
  if (typeof raw === "number") ms = raw * 1000;
  else if (typeof raw === "string") {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(raw);
    if (!m) return fail(src, "must be a duration in seconds (or with ms/s/m/h)", raw);
    ms = Number(m[1]) * DURATION_UNITS_MS[m[2] ?? "s"];
  } else return fail(src, "must be a duration in seconds", raw);
  if (!Number.isFinite(ms) || ms < 0 || (!allowZero && ms === 0)) {
    fail(src, allowZero ? "must be ≥ 0" : "must be > 0", raw);
  }
  return Math.round(ms);
}

const SIZE_UNITS: Record<string, number> = {
  "": 1,
  b: 1,
  k: 1000,
  kb: 1000,
  kib: 1024,
  m: 1_000_000,
  mb: 1_000_000,
  mib: 1024 ** 2,
  g: 1_000_000_000,
  gb: 1_000_000_000,
  gib: 1024 ** 3,
};

/** A byte size: a number of bytes or a string like `32MiB`, `512kb`. */
export function parseByteSize(raw: unknown, src: ValueSource): number {
  let bytes = NaN;
  if (typeof raw === "number") bytes = raw;
  else if (typeof raw === "string") {
    const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(raw);
    const unit = m ? SIZE_UNITS[m[2].toLowerCase()] : undefined;
    if (m && unit !== undefined) bytes = Number(m[1]) * unit;
  }
  if (!Number.isFinite(bytes) || bytes < 1) fail(src, "must be a byte size such as 32MiB", raw);
  return Math.floor(bytes);
}
