/**
 * A small JSON-schema checker for the tests: the keywords the simulated tool-call arguments
 * honour (type, properties, required, additionalProperties, enum, const, items, prefixItems,
 * min/maxItems, minimum/maximum and their exclusive forms, multipleOf, min/maxLength,
 * min/maxProperties, anyOf, oneOf, allOf, local $ref). Returns the violations, empty when
 * the value fits.
 */

type Schema = Record<string, unknown>;

const isObj = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);

function typeMatches(value: unknown, type: string): boolean {
  switch (type) {
    case "object":
      return isObj(value);
    case "array":
      return Array.isArray(value);
    case "string":
      return typeof value === "string";
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    default:
      return true;
  }
}

function resolve(schema: Schema, root: Schema): Schema {
  if (typeof schema.$ref !== "string") return schema;
  let target: unknown = root;
  for (const part of schema.$ref.slice(1).split("/").filter(Boolean)) {
    target = isObj(target) ? target[part] : undefined;
  }
  const { $ref: _, ...rest } = schema;
  return resolve({ ...(target as Schema), ...rest }, root);
}

function checkNumber(value: number, s: Schema, path: string, out: string[]): void {
  const num = (k: string) => (typeof s[k] === "number" ? (s[k] as number) : null);
  const min = num("minimum");
  const max = num("maximum");
  const exMin = num("exclusiveMinimum") ?? (s.exclusiveMinimum === true ? min : null);
  const exMax = num("exclusiveMaximum") ?? (s.exclusiveMaximum === true ? max : null);
  if (min !== null && value < min) out.push(`${path}: ${value} < minimum ${min}`);
  if (max !== null && value > max) out.push(`${path}: ${value} > maximum ${max}`);
  if (exMin !== null && value <= exMin) out.push(`${path}: ${value} <= exclusiveMinimum ${exMin}`);
  if (exMax !== null && value >= exMax) out.push(`${path}: ${value} >= exclusiveMaximum ${exMax}`);
  const m = num("multipleOf");
  if (m !== null && Math.abs(value / m - Math.round(value / m)) > 1e-9) {
    out.push(`${path}: ${value} not a multiple of ${m}`);
  }
}

function checkObject(value: Schema, s: Schema, root: Schema, path: string, out: string[]): void {
  const properties = isObj(s.properties) ? s.properties : {};
  for (const k of Array.isArray(s.required) ? s.required : []) {
    if (!(k in value)) out.push(`${path}: missing required ${k}`);
  }
  for (const [k, v] of Object.entries(value)) {
    if (k in properties) check(v, properties[k], root, `${path}.${k}`, out);
    else if (s.additionalProperties === false) out.push(`${path}: unexpected key ${k}`);
    else if (isObj(s.additionalProperties))
      check(v, s.additionalProperties, root, `${path}.${k}`, out);
  }
  const n = Object.keys(value).length;
  if (typeof s.minProperties === "number" && n < s.minProperties) out.push(`${path}: too few keys`);
  if (typeof s.maxProperties === "number" && n > s.maxProperties)
    out.push(`${path}: too many keys`);
}

function checkArray(value: unknown[], s: Schema, root: Schema, path: string, out: string[]): void {
  if (typeof s.minItems === "number" && value.length < s.minItems)
    out.push(`${path}: too few items`);
  if (typeof s.maxItems === "number" && value.length > s.maxItems)
    out.push(`${path}: too many items`);
  const tuple = Array.isArray(s.prefixItems)
    ? s.prefixItems
    : Array.isArray(s.items)
      ? s.items
      : null;
  value.forEach((item, i) => {
    const schema = tuple !== null ? (tuple[i] ?? (isObj(s.items) ? s.items : {})) : s.items;
    if (schema !== undefined) check(item, schema, root, `${path}[${i}]`, out);
  });
}

export function check(
  value: unknown,
  raw: unknown,
  root: Schema,
  path: string,
  out: string[],
): void {
  if (!isObj(raw)) return;
  const s = resolve(raw, root);
  if ("const" in s && JSON.stringify(s.const) !== JSON.stringify(value))
    out.push(`${path}: not const`);
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    out.push(`${path}: ${JSON.stringify(value)} not in enum`);
  }
  const types = typeof s.type === "string" ? [s.type] : Array.isArray(s.type) ? s.type : [];
  if (types.length > 0 && !types.some((t) => typeMatches(value, String(t)))) {
    out.push(`${path}: ${JSON.stringify(value)} is not ${types.join("|")}`);
  }
  for (const sub of Array.isArray(s.allOf) ? s.allOf : []) check(value, sub, root, path, out);
  for (const key of ["anyOf", "oneOf"]) {
    const branches = s[key];
    if (!Array.isArray(branches)) continue;
    const fits = branches.filter((b) => validate(value, b, root).length === 0).length;
    if (key === "anyOf" ? fits === 0 : fits !== 1) out.push(`${path}: ${key} matched ${fits}`);
  }
  if (typeof value === "number") checkNumber(value, s, path, out);
  if (typeof value === "string") {
    if (typeof s.minLength === "number" && value.length < s.minLength)
      out.push(`${path}: too short`);
    if (typeof s.maxLength === "number" && value.length > s.maxLength)
      out.push(`${path}: too long`);
  }
  if (isObj(value)) checkObject(value, s, root, path, out);
  if (Array.isArray(value)) checkArray(value, s, root, path, out);
}

export function validate(value: unknown, schema: unknown, root = schema as Schema): string[] {
  const out: string[] = [];
  check(value, schema, root, "$", out);
  return out;
}
