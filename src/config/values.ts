/**
 * The kinds of value a setting can hold, as zod schemas. Each accepts the value as a YAML file
 * writes it (a number, a boolean, a sequence) and as text from a flag or an environment
 * variable, and yields the typed value; each failure carries the message a user reads after
 * the setting's name (`must be a number`), so every command words its errors alike.
 */
import { z } from "zod";

/**
 * What the JSON Schema of a value shows where its zod schema cannot say it: the value as a
 * file may write it, text included (a schema that reads text through a preprocessing step
 * would show only what it yields).
 */
export const JSON_SHAPES = new WeakMap<z.ZodType, z.ZodType>();

/** `schema`, whose JSON Schema is `shape`'s. */
export function shaped<S extends z.ZodType>(schema: S, shape: z.ZodType): S {
  JSON_SHAPES.set(schema, shape);
  return schema;
}

/** Text as given on a command line or in the environment: surrounding blanks mean nothing. */
const trimmed = (v: unknown) => (typeof v === "string" ? v.trim() : v);

/** A number written as text, as JSON Schema can describe it. */
const NUMERIC_TEXT = /^\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*$/;

/** A number from text, or the value unchanged (text that is no number too) for the schema to judge. */
const numeric = (v: unknown) => {
  if (typeof v !== "string" || v.trim() === "") return v;
  const n = Number(v.trim());
  return Number.isFinite(n) ? n : v;
};

/** A number, also as text; `n` says which numbers. */
const fromText = (n: z.ZodNumber) =>
  shaped(z.preprocess(numeric, n), z.union([n, z.string().regex(NUMERIC_TEXT)]));

const aNumber = () => z.number({ error: "must be a number" });

/** A number ≥ 0 (weights, multipliers). */
export const nonNegative = () => fromText(aNumber().min(0, { error: "must be ≥ 0" }));

/** A number > 0 (time scales). */
export const positive = () => fromText(aNumber().gt(0, { error: "must be > 0" }));

/** A share: a number from 0 to 1. */
export const share = () => {
  const error = "must be between 0 and 1";
  return fromText(aNumber().min(0, { error }).max(1, { error }));
};

/** An integer in [min, max]. */
export const integer = (min: number, max: number) => {
  const error = `must be an integer between ${min} and ${max}`;
  return fromText(aNumber().int({ error }).min(min, { error }).max(max, { error }));
};

const BOOLEAN_WORDS: Record<string, boolean> = {
  1: true,
  true: true,
  yes: true,
  on: true,
  0: false,
  false: false,
  no: false,
  off: false,
};
const capitalised = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
/** The words as a file may write them (JSON Schema has no case-blind match). */
const BOOLEAN_TEXT = Object.keys(BOOLEAN_WORDS).flatMap((w) => [
  w,
  capitalised(w),
  w.toUpperCase(),
]);

export const boolean = (error = "must be a boolean (true/false)") =>
  shaped(
    z.preprocess(
      (v) => (typeof v === "string" ? (BOOLEAN_WORDS[v.trim().toLowerCase()] ?? v) : v),
      z.boolean({ error }),
    ),
    z.union([z.boolean(), z.enum([...new Set(BOOLEAN_TEXT)] as [string, ...string[]])]),
  );

export const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.preprocess(trimmed, z.enum(values, { error: `must be one of ${values.join(", ")}` }));

/** Text a file may also write as a number (a model called `8`, a numeric token). */
const textOrNumber = (v: unknown) => (typeof v === "number" ? String(v) : trimmed(v));

/** A non-empty string; a YAML number is taken as its text. */
export const text = () =>
  shaped(
    z.preprocess(
      textOrNumber,
      z
        .string({ error: "must be a non-empty string" })
        .min(1, { error: "must be a non-empty string" }),
    ),
    z.union([z.string().min(1), z.number()]),
  );

/**
 * Text matching `pattern`, trimmed. A YAML number is refused, not turned into text: digits
 * past a double's precision would be changed, and a secret must be exactly what was written.
 */
export const textMatching = (pattern: RegExp, error: string) =>
  z.preprocess(
    trimmed,
    z.string({ error: `${error} (quote it in a YAML file)` }).regex(pattern, { error }),
  );

/** How a file may write a list of `item`: one comma-separated string, or a sequence. */
const listShape = (item: z.ZodType) => z.union([z.string().min(1), z.array(item).min(1)]);

const listItems = () =>
  z
    .union([z.string(), z.array(z.string())], {
      error: "must be a comma-separated list or a sequence of strings",
    })
    .transform((v) => (typeof v === "string" ? v.split(",") : v).map((s) => s.trim()))
    .pipe(
      z
        .array(z.string().min(1, { error: "must not hold an empty item" }))
        .min(1, { error: "must not be empty" }),
    );

/** A comma list (flag, environment) or a YAML sequence of non-empty strings. */
export const list = () => shaped(listItems(), listShape(z.string().min(1)));

/** A list (as `list` reads it) of names from `values`. */
export const listOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  shaped(
    listItems().pipe(z.array(z.enum(values, { error: `must list only ${values.join(", ")}` }))),
    listShape(z.enum(values)),
  );

/** A list (as `list` reads it) whose every item `item` reads (`item` names the problem). */
export const listOfItems = <T>(item: z.ZodType<T>) =>
  shaped(
    listItems()
      .transform((items): unknown[] => items)
      .pipe(z.array(item)),
    listShape(item),
  );

const DURATION = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/;
const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const DURATION_ERROR = "must be a duration in seconds (or with ms/s/m/h)";

/** Milliseconds of a duration written as text (`90`, `1.5s`, `30m`); null when it is not one. */
export function durationTextMs(text: string): number | null {
  const m = DURATION.exec(text);
  return m === null ? null : Math.round(Number(m[1]) * DURATION_UNITS_MS[m[2] ?? "s"]);
}

/**
 * A duration, yielding milliseconds. A bare number is seconds, as ThunderAgent's flags are
 * (`--scheduler-interval 5.0`); a suffix `ms`, `s`, `m` or `h` picks the unit.
 */
export const duration = (o: { allowZero?: boolean } = {}) => {
  const ms = z.number();
  const seconds = o.allowZero ? z.number().min(0) : z.number().gt(0);
  return shaped(
    z
      .union([z.number(), z.string().regex(DURATION, { error: DURATION_ERROR })], {
        error: DURATION_ERROR,
      })
      .transform((v) => {
        if (typeof v === "number") return Math.round(v * 1000);
        return durationTextMs(v) as number;
      })
      .pipe(o.allowZero ? ms.min(0, { error: "must be ≥ 0" }) : ms.gt(0, { error: "must be > 0" })),
    z.union([seconds, z.string().regex(DURATION)]),
  );
};

// Each unit in any case, spelt without the i flag, which a JSON Schema pattern cannot carry.
const SIZE = /^\s*(\d+(?:\.\d+)?)\s*([kKmMgG](?:[iI]?[bB])?|[bB])?\s*$/;
const SIZE_UNITS: Record<string, number> = {
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
const SIZE_ERROR = "must be a byte size such as 32MiB";

/** A byte size: a number of bytes or text like `32MiB`, `512kb`. */
export const byteSize = () =>
  shaped(
    z
      .union([z.number(), z.string().regex(SIZE, { error: SIZE_ERROR })], { error: SIZE_ERROR })
      .transform((v) => {
        if (typeof v === "number") return Math.floor(v);
        const m = SIZE.exec(v) as RegExpExecArray;
        return Math.floor(Number(m[1]) * SIZE_UNITS[(m[2] ?? "b").toLowerCase()]);
      })
      .pipe(z.number({ error: SIZE_ERROR }).min(1, { error: SIZE_ERROR })),
    z.union([z.number().min(1), z.string().regex(SIZE)]),
  );

/** `URL.parse` (Node 22.1 and later), which an installed maitred on Node 20 does not have. */
function parseUrl(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

/**
 * An http(s) base URL without a trailing slash, query or fragment. Credentials are dropped:
 * the URL names a backend everywhere (labels of `/metrics`, `/health`, logs), where a password
 * must not appear, and fetch does not send them.
 */
export const httpUrl = () =>
  text().transform((raw, ctx) => {
    const url = parseUrl(raw);
    const problem =
      url === null
        ? "must be a URL"
        : url.protocol !== "http:" && url.protocol !== "https:"
          ? "must be an http(s) URL"
          : url.search || url.hash
            ? "must not have a query or fragment"
            : null;
    if (url === null || problem !== null) {
      ctx.issues.push({
        code: "custom",
        message: `${problem}, got ${JSON.stringify(raw)}`,
        input: raw,
      });
      return z.NEVER;
    }
    return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
  });

/**
 * A value read by a parser of its own grammar (a workload mix, a class mix) that throws an
 * error whose message says what is wrong; the message becomes the setting's error.
 */
export const parsedText = <T>(parse: (raw: string) => T) =>
  text().transform((raw, ctx) => {
    try {
      return parse(raw);
    } catch (err) {
      ctx.issues.push({ code: "custom", message: messageOf(err), input: raw });
      return z.NEVER;
    }
  });

/** A domain parser's error without the field name it may have put in front. */
function messageOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const field = (err as { field?: unknown }).field;
  return typeof field === "string" && err.message.startsWith(`${field}: `)
    ? err.message.slice(field.length + 2)
    : err.message;
}

/**
 * One of two readings chosen by the value's kind (a switch or a mapping, say), so that a
 * mistake deep inside the chosen one is reported where it is, not as "matches neither".
 */
export function byKind<A, B>(
  isB: (raw: unknown) => boolean,
  a: z.ZodType<A>,
  b: z.ZodType<B>,
): z.ZodType<A | B> {
  const schema = z.unknown().transform((raw, ctx) => {
    const r = (isB(raw) ? b : a).safeParse(raw, { reportInput: true });
    if (r.success) return r.data;
    // Each problem keeps its own path and the value it was found in.
    for (const issue of r.error.issues) ctx.issues.push(issue as z.core.$ZodRawIssue);
    return z.NEVER;
  });
  return shaped(schema, z.union([a, b]));
}
