/**
 * A setting, declared once: its key (the flag's name, the YAML key and, upper-cased, the
 * environment twin), the zod schema that reads it, its default as a user would write it, and
 * its help. Commands build their options, their `--help`, the flag tables in config/README.md, their errors
 * and the config file's JSON Schema from these declarations; nothing about a setting is
 * written twice.
 */
import { type Command, Option } from "commander";
import { type core, z } from "zod";
import { ConfigError } from "../errors.ts";
import { JSON_SHAPES } from "./values.ts";

export interface Setting<T = unknown> {
  /** kebab-case: `--scheduler-interval`, `scheduler-interval:` in YAML. */
  key: string;
  /** Reads the value as YAML gives it or as text from a flag or the environment. */
  schema: z.ZodType<T>;
  help: string;
  /** Commander's placeholder (`<seconds>`); absent for a switch. */
  arg?: string;
  /** The default as a user would write it; absent when there is none (see defaultText). */
  default?: string | number | boolean | readonly string[];
  /** What `--help` says of the default when the value would not say it. */
  defaultText?: string;
  /** Settable only in a config file (a structured value). */
  fileOnly?: boolean;
  /** A switch that is on unless `--no-<key>` is given. */
  negatable?: boolean;
  /** A flag given any number of times; the schema reads the list of its values. */
  repeatable?: boolean;
  /** Never echoed back in an error message. */
  secret?: boolean;
}

/** Declares a setting, keeping its exact type (its schema's value, whether it has a default). */
// biome-ignore lint/suspicious/noExplicitAny: any value type; ValueOf reads it back.
export const setting = <const S extends Setting<any>>(s: S): S => s;

/** The setting `key` of a command's table, for another command that offers it too. */
export function settingOf<S extends Setting>(
  settings: readonly S[],
  key: string,
  command: string,
): S {
  const s = settings.find((f) => f.key === key);
  if (s === undefined) throw new Error(`${command} has no setting ${key}`);
  return s;
}

/** `scheduler-interval` → `schedulerInterval`, the name commander gives the flag's value. */
export const camel = (key: string) => key.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** `scheduler-interval` → `MAITRED_SCHEDULER_INTERVAL`. */
export const envTwin = (key: string) => `MAITRED_${key.toUpperCase().replaceAll("-", "_")}`;

/**
 * Keys under which a value may hold a secret wherever they appear in a nested setting: API
 * keys, and a tenants mapping written wrongly (a key where a tenant's settings belong). Names
 * of keys are shown: they are what the reader looks for in the file.
 */
const SECRET_KEYS = new Set(["api_keys", "tenants"]);

/**
 * The problems of `raw` as the setting's errors, one per problem: the field (with the path
 * into a nested value), what is wrong, the offending value unless it is a secret, and where
 * it came from.
 */
function settingErrors(s: Setting, raw: unknown, origin: string, error: z.ZodError): ConfigError[] {
  const out: ConfigError[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map(String);
    const secret = s.secret || path.some((p) => SECRET_KEYS.has(p));
    // An item of a list is named by its value, not by its index in what the text became.
    const named = issue.path.filter((p) => typeof p !== "number").map(String);
    const field = [s.key, ...named].join(".");
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        out.push(new ConfigError(`${field}.${key}`, `${issue.message} (from ${origin})`));
      }
      continue;
    }
    // A custom problem already says what is wrong with the value.
    // The value as given where it can be found there, else as the failing check saw it.
    const value = valueAt(raw, path) ?? issue.input;
    const got =
      issue.code === "custom"
        ? ""
        : value === undefined
          ? ", but it is missing"
          : secret
            ? ""
            : `, got ${JSON.stringify(value)}`;
    out.push(new ConfigError(field, `${issue.message}${got} (from ${origin})`));
  }
  return out;
}

function valueAt(raw: unknown, path: readonly string[]): unknown {
  let v = raw;
  for (const p of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}

/** The setting's value read from `raw`, or every problem with it. */
export function checkSetting<T>(
  s: Setting<T>,
  raw: unknown,
  origin: string,
): { ok: true; value: T } | { ok: false; errors: ConfigError[] } {
  const r = s.schema.safeParse(raw, { reportInput: true });
  return r.success
    ? { ok: true, value: r.data }
    : { ok: false, errors: settingErrors(s, raw, origin, r.error) };
}

/** The setting's value read from `raw`; a `ConfigError` naming the field and `origin` if bad. */
export function parseSetting<T>(s: Setting<T>, raw: unknown, origin: string): T {
  const r = checkSetting(s, raw, origin);
  if (r.ok) return r.value;
  throw r.errors[0];
}

/** The setting's default, read by its own schema; undefined when it has none. */
export function defaultOf<T>(s: Setting<T>): T | undefined {
  return s.default === undefined ? undefined : parseSetting(s, s.default, "its default");
}

/** How `--help` and config/README.md show the default. */
export function defaultShown(s: Setting): string | undefined {
  if (s.defaultText !== undefined) return s.defaultText;
  if (s.default === undefined) return undefined;
  return Array.isArray(s.default) ? s.default.join(",") : String(s.default);
}

/**
 * Adds the settings as options of `cmd`. Values stay as typed (text) and are read by
 * `parseSetting`, so a bad one gets the setting's own error; `env` names each one's
 * environment twin in its help.
 */
export function addSettingOptions(
  cmd: Command,
  settings: readonly Setting[],
  o: { env?: boolean } = {},
): Command {
  for (const s of settings) {
    if (s.fileOnly) continue;
    const notes: string[] = [];
    const def = defaultShown(s);
    if (def !== undefined && !s.negatable) notes.push(`default: ${def}`);
    if (o.env) notes.push(`env ${envTwin(s.key)}`);
    const help = `${s.help}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}`;
    const flags = s.negatable ? `--no-${s.key}` : s.arg ? `--${s.key} ${s.arg}` : `--${s.key}`;
    const option = new Option(flags, help);
    if (s.repeatable) option.argParser((v: string, acc: string[] = []) => [...acc, v]);
    cmd.addOption(option);
  }
  return cmd;
}

/**
 * The values commander read for these settings, by key; a setting not given is absent (a
 * negatable switch counts as given only when turned off).
 */
export function givenFlags(
  settings: readonly Setting[],
  opts: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of settings) {
    const v = opts[camel(s.key)];
    if (v === undefined || (s.negatable && v === true)) continue;
    out[s.key] = v;
  }
  return out;
}

/** What a schema node says of itself, kept when its shape replaces the rest. */
const OWN_KEYS = new Set(["description", "default", "title"]);

/** Puts a value's shape (values.ts) in place of what zod could tell of it. */
function useShapes(ctx: { zodSchema: unknown; jsonSchema: core.JSONSchema.BaseSchema }): void {
  const shape = JSON_SHAPES.get(ctx.zodSchema as z.ZodType);
  if (shape === undefined) return;
  const { $schema: _, ...json } = z.toJSONSchema(shape, {
    io: "input",
    unrepresentable: "any",
    override: useShapes,
  });
  const node = ctx.jsonSchema as Record<string, unknown>;
  for (const key of Object.keys(node)) if (!OWN_KEYS.has(key)) delete node[key];
  Object.assign(node, json);
}

/** JSON Schema of one setting's value as a file writes it, with its help and default. */
export function settingJsonSchema(s: Setting): core.JSONSchema.BaseSchema {
  const { $schema: _, ...schema } = z.toJSONSchema(s.schema, {
    io: "input",
    unrepresentable: "any",
    override: useShapes,
  });
  return {
    ...schema,
    description: s.help,
    ...(s.default !== undefined ? { default: s.default } : {}),
  };
}

/** The value type a setting yields. */
export type ValueOf<S> = S extends { schema: z.ZodType<infer T> } ? T : never;

/** What `readSettings` yields for a setting: its value, always there when it has a default. */
type Read<S> = S extends { default: string | number | boolean | readonly string[] }
  ? ValueOf<S>
  : ValueOf<S> | undefined;

/**
 * Reads a command's settings from commander's options (keyed as commander names them): each
 * given value by its schema, each other its default (undefined when it has none). The first
 * bad value is a `ConfigError` naming it and its flag.
 */
export function readSettings<S extends Record<string, Setting<unknown>>>(
  settings: S,
  opts: Record<string, unknown>,
): { [K in keyof S]: Read<S[K]> } {
  const given = givenFlags(Object.values(settings), opts);
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(settings)) {
    out[name] = s.key in given ? parseSetting(s, given[s.key], `--${s.key}`) : defaultOf(s);
  }
  return out as { [K in keyof S]: Read<S[K]> };
}

/** One flag's value read by `schema` (scripts' own flags); a `ConfigError` naming it if bad. */
export function parseFlag<T>(key: string, schema: z.ZodType<T>, raw: unknown): T {
  return parseSetting({ key, schema, help: "" }, raw, `--${key}`);
}
