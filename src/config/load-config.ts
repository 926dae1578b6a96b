/**
 * Resolves the router configuration from its layers: defaults < YAML file < `MAITRED_*`
 * environment twins < command-line flags (flags win). Every value is read by its setting's
 * schema (router-config.ts); every error is a `ConfigError` naming the field and its origin.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { ConfigError } from "../errors.ts";
import { unknownBudgetTenants } from "./budget-section.ts";
import type { PriorityValue } from "./priority-section.ts";
import {
  DEFAULT_CONFIG,
  type ParsedBackends,
  ROUTER_SETTINGS,
  type RouterConfig,
  type RouterSetting,
} from "./router-config.ts";
import { checkSetting, envTwin, parseSetting, settingJsonSchema } from "./setting.ts";
import { settleBounds } from "./tail-preset.ts";

export interface ConfigInputs {
  /** Flag values keyed by field key (`scheduler-interval`); undefined = not given. */
  flags?: Record<string, unknown>;
  /** Environment (process.env in production). */
  env?: Record<string, string | undefined>;
  /** YAML file path (`--config`, or `MAITRED_CONFIG`). */
  configFile?: string;
  /** File reader (tests inject one). */
  readFile?: (path: string) => string;
  /**
   * Settings already read, in place of a config file (the library's `createRouter`): the same
   * layer, keys and values as the file's, named `origin` in errors.
   */
  document?: { settings: Record<string, unknown>; origin: string };
}

export { envTwin };

const BY_KEY = new Map(ROUTER_SETTINGS.map((s) => [s.key, s]));

function set(config: RouterConfig, field: RouterSetting, value: unknown): void {
  if (field.prop === "backends") {
    const parsed = value as ParsedBackends;
    config.backends = parsed.backends;
    config.simBackends = parsed.simBackends;
    return;
  }
  if (field.prop === "priority") {
    // A switch (flag, env twin) turns the section on or off without replacing it.
    const p = value as PriorityValue;
    if (p.kind === "section") config.priority = p.priority;
    else config.priority.enabled = p.enabled;
    return;
  }
  (config as unknown as Record<string, unknown>)[field.prop] = value;
}

function apply(config: RouterConfig, field: RouterSetting, raw: unknown, origin: string): void {
  set(config, field, parseSetting(field, raw, origin));
}

function readConfigFile(path: string, readFile: (p: string) => string): Record<string, unknown> {
  let text: string;
  try {
    text = readFile(path);
  } catch (err) {
    throw new ConfigError("config", `cannot read ${path}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError("config", `${path} is not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== "object" || Array.isArray(doc)) {
    throw new ConfigError("config", `${path} must be a YAML mapping of settings`);
  }
  return doc as Record<string, unknown>;
}

/**
 * Every problem of a config file, not only the first (`maitred config check`): an unreadable
 * or malformed file, each unknown setting and each bad value, as `ConfigError`s naming the
 * field. Empty = the file is good.
 */
export function checkConfigFile(
  path: string,
  readFile: (p: string) => string = (p) => readFileSync(p, "utf8"),
): ConfigError[] {
  let doc: Record<string, unknown>;
  try {
    doc = readConfigFile(path, readFile);
  } catch (err) {
    if (err instanceof ConfigError) return [err];
    throw err;
  }
  const errors: ConfigError[] = [];
  const config: RouterConfig = structuredClone(DEFAULT_CONFIG);
  for (const [key, raw] of Object.entries(doc)) {
    const field = BY_KEY.get(key);
    if (!field) {
      errors.push(unknownSetting(key, path));
      continue;
    }
    const r = checkSetting(field, raw, path);
    if (r.ok) set(config, field, r.value);
    else errors.push(...r.errors);
  }
  errors.push(...crossErrors(config, path));
  return errors;
}

/** What no one setting can see: a budget for a tenant the priority section does not name. */
function crossErrors(config: RouterConfig, origin: string): ConfigError[] {
  const errors = unknownBudgetTenants(config.budgets, config.priority.tenants).map(
    (t) =>
      new ConfigError(
        `budgets.tenants.${t}`,
        `no tenant ${t} in priority.tenants, so no caller can be it (from ${origin})`,
      ),
  );
  // A URL named per backend that is not a backend would be ignored: a typo must not pass.
  // (sim:N backends get their URLs at start-up, so only listed backends are checked.)
  if (config.simBackends === 0) {
    for (const [key, setting] of [
      ["engine-priority", config.enginePriority],
      ["host-kv-tokens", config.hostKvTokens],
    ] as const) {
      for (const url of Object.keys(setting?.byBackend ?? {})) {
        if (config.backends.includes(url)) continue;
        errors.push(
          new ConfigError(key, `names ${url}, which is not in --backends (from ${origin})`),
        );
      }
    }
  }
  return errors;
}

function unknownSetting(key: string, path: string): ConfigError {
  return new ConfigError(
    key,
    `unknown setting in ${path}; known: ${[...BY_KEY.keys()].join(", ")}`,
  );
}

export function resolveRouterConfig(inputs: ConfigInputs = {}): RouterConfig {
  const env = inputs.env ?? {};
  const flags = inputs.flags ?? {};
  const config: RouterConfig = structuredClone(DEFAULT_CONFIG);
  // Each setting given, by the highest layer that gave it (1 file, 2 environment, 3 flag).
  const given = new Map<string, number>();

  const configFile =
    (flags.config as string | undefined) ?? inputs.configFile ?? env.MAITRED_CONFIG;
  const file =
    inputs.document ??
    (configFile !== undefined && configFile !== ""
      ? {
          settings: readConfigFile(configFile, inputs.readFile ?? ((p) => readFileSync(p, "utf8"))),
          origin: configFile,
        }
      : null);
  if (file !== null) {
    for (const [key, raw] of Object.entries(file.settings)) {
      const field = BY_KEY.get(key);
      if (!field) throw unknownSetting(key, file.origin);
      apply(config, field, raw, file.origin);
      given.set(key, 1);
    }
  }
  for (const field of ROUTER_SETTINGS) {
    if (field.fileOnly) continue;
    const name = envTwin(field.key);
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    apply(config, field, raw, name);
    given.set(field.key, 2);
  }
  for (const field of ROUTER_SETTINGS) {
    if (field.fileOnly) continue;
    const raw = flags[field.key];
    if (raw === undefined) continue;
    apply(config, field, raw, `--${field.key}`);
    given.set(field.key, 3);
  }
  settleBounds(config, given);
  const [cross] = crossErrors(config, file?.origin ?? "the settings");
  if (cross !== undefined) throw cross;
  return config;
}

/**
 * JSON Schema (draft 2020-12) of a `maitred serve --config` file, from the same settings that
 * read it: editors use it for completion and to flag a misspelt or mistyped setting.
 */
export function configJsonSchema(): Record<string, unknown> {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "maitred serve --config",
    description:
      "Settings of maitred serve. Each key is a flag without its dashes; flags and MAITRED_* environment variables win over the file.",
    type: "object",
    properties: Object.fromEntries(ROUTER_SETTINGS.map((s) => [s.key, settingJsonSchema(s)])),
    additionalProperties: false,
  };
}
