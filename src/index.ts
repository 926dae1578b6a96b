/**
 * maitred as a library, the package's entry (`import { createRouter } from "maitred"`):
 * `createRouter` builds the router `maitred serve` runs, to be mounted in a Node HTTP server of
 * the caller's (Hono, Express, Fastify, plain node:http); `startRouter` runs it on a port of its
 * own, as `maitred serve` does through this same entry. Both take the settings of
 * `maitred serve`, read as its YAML config file reads them: the same names, values, defaults
 * and `ConfigError`s. What this file exports is the package's whole API.
 */
import { resolveRouterConfig } from "./config/load-config.ts";
import { DEFAULT_CONFIG, ROUTER_SETTINGS, type RouterConfig } from "./config/router-config.ts";
import { camel } from "./config/setting.ts";
import type { RouterMode } from "./core/api.ts";
import { ConfigError } from "./errors.ts";
import * as service from "./service/service.ts";

export type { ConfigInputs } from "./config/load-config.ts";
export type { RouterConfig } from "./config/router-config.ts";
export type { Clock } from "./runtime/clock.ts";
export type {
  CreateRouterOptions,
  Router,
  RouterApp,
  RouterHandle,
  StartRouterOptions,
} from "./service/service.ts";
export type { Logger, LogLevel } from "./util/logger.ts";
export { ConfigError, resolveRouterConfig };

/**
 * Settings of `maitred serve` by their flag's name (`"scheduler-interval"`) or its camelCase
 * (`schedulerInterval`), with the values its YAML config file takes:
 * `backends: ["http://gpu1:8000"]` or `"sim:2"`, `schedulerInterval: 5` (seconds) or `"500ms"`,
 * `priority: { … }`. A setting left out, or undefined, has its default; no `MAITRED_*` variable
 * is read.
 */
export interface RouterSettings {
  backends?: string | readonly string[];
  router?: RouterMode;
  [setting: string]: unknown;
}

/** Settings, or a whole configuration (from `resolveRouterConfig`), used as it is. */
export type RouterInput = RouterSettings | RouterConfig;

/** Each accepted name (flag name and camelCase) → the setting's key. */
const KEY_OF = new Map(
  ROUTER_SETTINGS.flatMap((s) => [[s.key, s.key] as const, [camel(s.key), s.key] as const]),
);

/** A value with every field of a configuration is one; settings are never that complete. */
function isRouterConfig(input: object): input is RouterConfig {
  return Object.keys(DEFAULT_CONFIG).every((k) => k in input);
}

/** `input` as a validated configuration; a `ConfigError` naming the setting as it was given. */
function configOf(input: RouterInput, caller: string): RouterConfig {
  if (typeof input !== "object" || input === null || Array.isArray(input))
    throw new ConfigError("settings", `${caller} takes an object of maitred serve settings`);
  if (isRouterConfig(input)) return input;
  const doc: Record<string, unknown> = {};
  /** The name each setting was given under, to name it so in an error. */
  const givenAs = new Map<string, string>();
  for (const [name, value] of Object.entries(input)) {
    if (value === undefined) continue;
    const key = KEY_OF.get(name);
    if (key === undefined)
      throw new ConfigError(
        name,
        `not a setting of maitred serve; known: ${ROUTER_SETTINGS.map((s) => camel(s.key)).join(", ")}`,
      );
    const earlier = givenAs.get(key);
    if (earlier !== undefined) throw new ConfigError(name, `given twice, also as ${earlier}`);
    givenAs.set(key, name);
    doc[key] = value;
  }
  // The settings go through the config file's layer, the one that reads structured values (a
  // list of backends, the priority section, the sim block) as well as text, so a setting given
  // here means exactly what it means in a file.
  try {
    return resolveRouterConfig({
      document: { settings: doc, origin: `${caller} settings` },
      env: {},
    });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const [head, ...rest] = err.field.split(".");
    const name = givenAs.get(head);
    if (name === undefined || name === head) throw err;
    throw new ConfigError([name, ...rest].join("."), err.message.slice(err.field.length + 2));
  }
}

/**
 * The router `maitred serve` runs, built and not yet started: mount `router.app` in a Hono
 * app, `router.fetch` in @hono/node-server, or `router.listener` in a node:http server; then
 * `await router.start()`, and `await router.close()` when the server stops. Invalid settings
 * reject with a `ConfigError`.
 */
export async function createRouter(
  settings: RouterInput = {},
  options: service.CreateRouterOptions = {},
): Promise<service.Router> {
  return service.createRouter(configOf(settings, "createRouter()"), options);
}

/**
 * The router on a port of its own (`host`, `port` settings), started: what `maitred serve`
 * runs. Resolves once it listens, with its URL.
 */
export async function startRouter(
  settings: RouterInput = {},
  options: service.StartRouterOptions = {},
): Promise<service.RouterHandle> {
  return service.startRouter(configOf(settings, "startRouter()"), options);
}
