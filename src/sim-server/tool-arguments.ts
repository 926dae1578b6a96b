/**
 * The arguments of a simulated tool call: JSON text that fits the function's `parameters`
 * schema, a pure function of the schema and a 32-bit key (so the same request gets the same
 * arguments, streamed or not). It is written the way Python's `json.dumps` writes it
 * (`", "` and `": "` separators), as models trained on such text emit it.
 *
 * Honoured: `type` (one name or a list), `properties` and `required` (every required key, each
 * optional one by a draw), `additionalProperties` (no keys are invented beyond `properties`
 * except a required key the properties do not list), `minProperties`, `enum`, `const`,
 * `items` (one schema or a tuple) and `prefixItems`, `minItems`/`maxItems`,
 * `minimum`/`maximum` and their exclusive forms, `multipleOf`, `minLength`/`maxLength`,
 * a few string `format`s, `anyOf`/`oneOf` (one branch), `allOf` (merged) and local `$ref`s.
 * Not honoured: `pattern`, `uniqueItems`, conditionals (`if`/`then`, `not`).
 * Strings are words from the word list the simulated model writes with.
 */

import { combine32 } from "../engine/hash.ts";
import { WORD_PIECES } from "../engine/word-list.ts";

type Schema = Record<string, unknown>;

const isObj = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);
const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);
const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** Below this depth optional keys and extra items are drawn; at it only what is required. */
const OPTIONAL_DEPTH = 4;
/** A recursive schema whose recursion is required stops here with an empty value. */
const MAX_DEPTH = 12;
/** Items beyond `minItems` when the schema sets no maximum. */
const EXTRA_ITEMS = 2;
/** Span of numbers when the schema bounds only one side (or neither). */
const DEFAULT_SPAN = 100;
const WORDS = WORD_PIECES.filter((p) => p.startsWith(" ")).map((p) => p.slice(1));

interface Context {
  root: Schema;
  depth: number;
  draw(): number;
}

/** Python's json.dumps spacing for any JSON value (used for `const` and `enum` values). */
export function pythonJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(", ")}]`;
  if (isObj(value)) {
    const entries = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pythonJson(v)}`);
    return `{${entries.join(", ")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function pick<T>(items: readonly T[], ctx: Context): T {
  return items[ctx.draw() % items.length];
}

/** `#/$defs/x`-style pointers into the root schema; anything else is left unresolved. */
function resolveRef(schema: Schema, ctx: Context): Schema {
  let s = schema;
  for (let hops = 0; typeof s.$ref === "string" && hops < MAX_DEPTH; hops++) {
    if (!s.$ref.startsWith("#")) return {};
    let target: unknown = ctx.root;
    for (const part of s.$ref.slice(1).split("/").filter(Boolean)) {
      const key = part.replaceAll("~1", "/").replaceAll("~0", "~");
      target = isObj(target) ? target[key] : undefined;
    }
    const { $ref: _, ...rest } = s;
    s = isObj(target) ? { ...target, ...rest } : rest;
  }
  return s;
}

/** `allOf` merged into one schema: properties united, required lists joined. */
function mergeAllOf(schema: Schema, ctx: Context): Schema {
  const { allOf, ...rest } = schema;
  if (!Array.isArray(allOf)) return schema;
  const merged: Schema = { ...rest };
  for (const raw of allOf) {
    if (!isObj(raw)) continue;
    const part = normalise(raw, ctx);
    const properties = { ...(merged.properties as Schema), ...(part.properties as Schema) };
    const required = [
      ...(Array.isArray(merged.required) ? merged.required : []),
      ...(Array.isArray(part.required) ? part.required : []),
    ];
    Object.assign(merged, part, { properties, required });
  }
  return merged;
}

/** One schema without references, `allOf` or `anyOf`/`oneOf` (one branch drawn). */
function normalise(schema: Schema, ctx: Context): Schema {
  const s = mergeAllOf(resolveRef(schema, ctx), ctx);
  const branches = s.anyOf ?? s.oneOf;
  if (!Array.isArray(branches) || branches.length === 0) return s;
  const { anyOf: _a, oneOf: _o, ...rest } = s;
  const branch = pick(branches, ctx);
  return isObj(branch) ? normalise({ ...rest, ...branch }, ctx) : rest;
}

function typeOf(s: Schema, ctx: Context): string {
  if (typeof s.type === "string") return s.type;
  if (Array.isArray(s.type) && s.type.length > 0) return String(pick(s.type, ctx));
  if ("properties" in s || "required" in s || "additionalProperties" in s) return "object";
  if ("items" in s || "prefixItems" in s || "minItems" in s || "maxItems" in s) return "array";
  if ("minimum" in s || "maximum" in s || "multipleOf" in s) return "number";
  return "string";
}

function valueText(schema: unknown, ctx: Context): string {
  if (!isObj(schema)) return JSON.stringify(pick(WORDS, ctx));
  const s = normalise(schema, ctx);
  if ("const" in s) return pythonJson(s.const);
  if (Array.isArray(s.enum) && s.enum.length > 0) return pythonJson(pick(s.enum, ctx));
  const inner = { ...ctx, depth: ctx.depth + 1 };
  switch (typeOf(s, ctx)) {
    case "object":
      return objectText(s, inner);
    case "array":
      return arrayText(s, inner);
    case "integer":
      return String(numberIn(s, ctx, true));
    case "number":
      return String(numberIn(s, ctx, false));
    case "boolean":
      return ctx.draw() % 2 === 0 ? "true" : "false";
    case "null":
      return "null";
    default:
      return JSON.stringify(stringFor(s, ctx));
  }
}

function objectText(s: Schema, ctx: Context): string {
  const properties = isObj(s.properties) ? s.properties : {};
  const required = new Set(Array.isArray(s.required) ? s.required.map(String) : []);
  const minProperties = isInt(s.minProperties) ? s.minProperties : 0;
  const optional = ctx.depth <= OPTIONAL_DEPTH;
  const keys = Object.keys(properties).filter(
    (k) => required.has(k) || (optional && ctx.draw() % 2 === 0),
  );
  for (const k of Object.keys(properties)) {
    if (keys.length >= minProperties) break;
    if (!keys.includes(k)) keys.push(k);
  }
  for (const k of required) if (!keys.includes(k)) keys.push(k);
  if (ctx.depth > MAX_DEPTH) return "{}";
  const extra = isObj(s.additionalProperties) ? s.additionalProperties : {};
  const entries = keys.map(
    (k) =>
      `${JSON.stringify(k)}: ${valueText(Object.hasOwn(properties, k) ? properties[k] : extra, ctx)}`,
  );
  return `{${entries.join(", ")}}`;
}

function arrayText(s: Schema, ctx: Context): string {
  const tuple = Array.isArray(s.prefixItems)
    ? s.prefixItems
    : Array.isArray(s.items)
      ? s.items
      : null;
  const min = isInt(s.minItems) ? Math.max(0, s.minItems) : 0;
  const max = isInt(s.maxItems) ? Math.max(min, s.maxItems) : Number.POSITIVE_INFINITY;
  let count = tuple !== null ? tuple.length : Math.max(min, 1);
  if (tuple === null && ctx.depth <= OPTIONAL_DEPTH) count += ctx.draw() % (EXTRA_ITEMS + 1);
  count = Math.min(Math.max(count, min), max);
  if (ctx.depth > MAX_DEPTH) count = Math.min(count, min);
  const rest = tuple !== null ? (isObj(s.items) ? s.items : {}) : (s.items ?? {});
  const items: string[] = [];
  for (let i = 0; i < count; i++) items.push(valueText(tuple?.[i] ?? rest, ctx));
  return `[${items.join(", ")}]`;
}

/** A number inside the schema's bounds, on its `multipleOf` grid; two decimals otherwise. */
function numberIn(s: Schema, ctx: Context, integer: boolean): number {
  // Older drafts spell exclusive bounds as `exclusiveMinimum: true` beside `minimum`.
  const exMin = isNum(s.exclusiveMinimum)
    ? s.exclusiveMinimum
    : s.exclusiveMinimum === true && isNum(s.minimum)
      ? s.minimum
      : null;
  const exMax = isNum(s.exclusiveMaximum)
    ? s.exclusiveMaximum
    : s.exclusiveMaximum === true && isNum(s.maximum)
      ? s.maximum
      : null;
  let lo = isNum(s.minimum) ? s.minimum : (exMin ?? null);
  let hi = isNum(s.maximum) ? s.maximum : (exMax ?? null);
  if (lo === null) lo = hi === null ? 0 : hi - DEFAULT_SPAN;
  if (hi === null || !Number.isFinite(hi - lo)) hi = lo + DEFAULT_SPAN;
  const step = isNum(s.multipleOf) && s.multipleOf > 0 ? s.multipleOf : integer ? 1 : 0.01;
  const first = Math.ceil(lo / step) + (exMin !== null && lo === exMin ? 1 : 0);
  const last = Math.floor(hi / step) - (exMax !== null && hi === exMax ? 1 : 0);
  const k = last < first ? first : first + (ctx.draw() % (last - first + 1));
  // Rounding keeps grid values such as 0.07 from printing as 0.07000000000000001.
  const value = Number((k * step).toPrecision(12));
  return integer ? Math.round(value) : value;
}

const FORMATS: Record<string, (ctx: Context) => string> = {
  "date-time": (ctx) => `2025-0${1 + (ctx.draw() % 9)}-1${ctx.draw() % 10}T12:00:00Z`,
  date: (ctx) => `2025-0${1 + (ctx.draw() % 9)}-1${ctx.draw() % 10}`,
  time: (ctx) => `1${ctx.draw() % 10}:30:00`,
  email: (ctx) => `${pick(WORDS, ctx)}@example.com`,
  uri: (ctx) => `https://example.com/${pick(WORDS, ctx)}`,
  url: (ctx) => `https://example.com/${pick(WORDS, ctx)}`,
  uuid: (ctx) => {
    const hex = Array.from({ length: 4 }, () => ctx.draw().toString(16).padStart(8, "0")).join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  },
};

function stringFor(s: Schema, ctx: Context): string {
  const format = typeof s.format === "string" ? FORMATS[s.format] : undefined;
  const minLength = isInt(s.minLength) ? s.minLength : 0;
  const maxLength = isInt(s.maxLength) ? s.maxLength : Number.POSITIVE_INFINITY;
  let text = format !== undefined ? format(ctx) : pick(WORDS, ctx);
  if (format === undefined) {
    for (let extra = ctx.draw() % 3; extra > 0; extra--) text += ` ${pick(WORDS, ctx)}`;
  }
  while (text.length < minLength) text += ` ${pick(WORDS, ctx)}`;
  return text.length > maxLength ? text.slice(0, maxLength) : text;
}

/**
 * The arguments text for `parameters` (null: the tool declares none, so `{}`). A schema
 * without a type is read as an object, as function parameters always are.
 */
export function toolArguments(parameters: Schema | null, key: number): string {
  if (parameters === null) return "{}";
  let counter = 0;
  const ctx: Context = {
    root: parameters,
    depth: 0,
    draw: () => combine32(key, counter++),
  };
  const schema = "type" in parameters ? parameters : { type: "object", ...parameters };
  return valueText(schema, ctx);
}
