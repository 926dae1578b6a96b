/**
 * `bench:proxy`'s flags and what they make of a run: the phases, the load's sizes, the
 * router's flags, the tokens phase's cases and upstreams. Checked before anything starts: a
 * `--token-cases` name that is no case is a mistake on the command line.
 */

import { ROUTER_SETTINGS } from "../../config/router-config.ts";
import { settingOf } from "../../config/setting.ts";
import { integer, list, listOf, nonNegative, oneOf, positive } from "../../config/values.ts";
import { type ScriptArgs, ScriptArgsError, type ScriptSpec } from "../script-args.ts";
import { jsonFlag } from "../script-flags.ts";
import type { Api } from "../upstream/upstream-request.ts";
import type { LoadKind } from "./proxy-load.ts";
import { type TokenCase, tokenCases } from "./proxy-tokens.ts";
import type { RouterPhase } from "./router-phases.ts";

const routerSchema = (key: string) => settingOf(ROUTER_SETTINGS, key, "maitred serve").schema;

export const BENCH_PROXY_SPEC = {
  name: "bench:proxy",
  summary:
    "maitred's proxy overhead on loopback, against a direct connection to the same upstream: router CPU per request and per SSE event by answer length (beside bare TCP and HTTP relays), then latency, throughput, SSE and large-body phases.",
  runtime:
    "about 7 min, counted from the flags (not timed): per upstream 8 s of warm-up and 7 cases × 4 paths × --token-seconds (4 s), then four short phases; scales with --upstreams × --apis × --token-seconds; progress on stderr",
  flags: {
    seconds: {
      arg: "<s>",
      default: "5",
      description: "length of the throughput and SSE phases",
      check: positive(),
    },
    requests: {
      arg: "<n>",
      default: "5000",
      description:
        "sequential requests of the latency phase (a tenth, at least 50, with the large body)",
      check: integer(1, 100_000_000),
    },
    connections: {
      arg: "<n>",
      default: "64",
      description: "keep-alive connections of the throughput phase",
      check: integer(1, 100_000),
    },
    router: {
      arg: "<mode>",
      default: "tr",
      description: "the router's --router: tr or default",
      check: routerSchema("router"),
    },
    "upstream-stream": {
      arg: "<mode>",
      default: "always",
      description: "the router's --upstream-stream: always or as-client",
      check: routerSchema("upstream-stream"),
    },
    json: jsonFlag("also write the figures as JSON"),
    "cpu-profile": {
      arg: "<file>",
      description: "write a CPU profile of the in-process router during --cpu-profile-phase",
    },
    phases: {
      arg: "<list>",
      default: "tokens,latency,throughput,sse,body",
      description: "which phases run",
      check: listOf(["tokens", "latency", "throughput", "sse", "body"]),
    },
    "cpu-profile-phase": {
      arg: "<phase>",
      default: "throughput",
      description: "the phase --cpu-profile covers: latency, throughput or sse",
      check: oneOf(["latency", "throughput", "sse"]),
    },
    "token-seconds": {
      arg: "<s>",
      default: "4",
      description: "length of each tokens case on each path",
      check: positive(),
    },
    "token-connections": {
      arg: "<n>",
      default: "16",
      description: "connections of the tokens cases (one small plain case also at 64)",
      check: integer(1, 100_000),
    },
    upstreams: {
      arg: "<list>",
      default: "vllm,vllm-one-write,fast",
      description: "upstreams of the tokens phase, a table block each",
      check: listOf(["vllm", "vllm-one-write", "fast"]),
    },
    apis: {
      arg: "<list>",
      default: "chat",
      description: "APIs of the tokens phase: chat, messages, responses",
      check: listOf(["chat", "messages", "responses"]),
    },
    "interval-ms": {
      arg: "<ms>",
      default: "0",
      description: "the vLLM-like upstream's engine step (0: every turn of its event loop)",
      check: nonNegative(),
    },
    "router-args": {
      arg: '"<flags>"',
      default: "",
      description:
        'more `maitred serve` flags for the tokens phase\'s router (give it as --router-args="…")',
    },
    "router-cpu-profile-dir": {
      arg: "<dir>",
      description: "the tokens phase's router writes its CPU profile there",
    },
    "token-cases": {
      arg: "<list>",
      defaultText: "all",
      description: "only these tokens cases, each plain|streamed:<tokens>:<connections>",
      check: list(),
    },
  },
} satisfies ScriptSpec;

export type ProxyBenchArgs = ScriptArgs<typeof BENCH_PROXY_SPEC.flags>;

/** The upstreams the tokens phase can measure against, a table block each. */
export type TokensUpstream = "vllm" | "vllm-one-write" | "fast";

export interface TokensPlan {
  cases: TokenCase[];
  upstreams: TokensUpstream[];
  /** Each case's length on each path. */
  seconds: number;
  /** The vLLM-like upstream's --interval-ms, as given. */
  intervalMs: string;
  /** The router's `maitred serve` flags beyond its backend. */
  routerArgs: string[];
  profileDir: string | undefined;
  /** How the run was asked for, for the first printed line. */
  commandLine: string;
  date: string;
}

export interface ProxyBenchPlan {
  phases: LoadKind[];
  seconds: number;
  requests: number;
  connections: number;
  router: string;
  upstreamStream: string;
  /** Null when the tokens phase does not run. */
  tokens: TokensPlan | null;
  /** The router-in-process phases that run, in order. */
  routerPhases: RouterPhase[];
  cpuProfile: { file: string; phase: string } | undefined;
}

/** A tokens case as `--token-cases` names it: `plain:4:16`, `streamed:512:16`. */
export const tokenCaseName = (c: TokenCase) =>
  `${c.stream ? "streamed" : "plain"}:${c.tokens}:${c.connections}`;

/**
 * The run the flags ask for. `argv` and `date` go into the first printed line. Throws
 * `ScriptArgsError` for a `--token-cases` name that is no case of this run's: the cases depend
 * on --token-connections, so no flag's check can see it alone.
 */
export function proxyBenchPlan(
  { values, parsed }: Pick<ProxyBenchArgs, "values" | "parsed">,
  o: { argv: readonly string[]; date: string },
): ProxyBenchPlan {
  const phases: LoadKind[] = parsed.phases;
  let tokens: TokensPlan | null = null;
  if (phases.includes("tokens")) {
    const only = parsed["token-cases"];
    const apis: Api[] = parsed.apis;
    const all = tokenCases(Number(values["token-connections"]), apis);
    const unknown = only?.filter((name) => !all.some((c) => tokenCaseName(c) === name)) ?? [];
    if (unknown.length > 0)
      throw new ScriptArgsError(
        `--token-cases: no such case ${unknown.join(", ")} (cases: ${all.map(tokenCaseName).join(", ")})`,
      );
    tokens = {
      cases: all.filter((c) => only === undefined || only.includes(tokenCaseName(c))),
      upstreams: parsed.upstreams,
      seconds: Number(values["token-seconds"]),
      intervalMs: values["interval-ms"],
      routerArgs: [
        ...["--router", values.router, "--upstream-stream", values["upstream-stream"]],
        ...values["router-args"].split(" ").filter((a) => a !== ""),
      ],
      profileDir: values["router-cpu-profile-dir"],
      commandLine: ["node scripts/bench-proxy.ts", ...o.argv].join(" "),
      date: o.date,
    };
  }
  const file = values["cpu-profile"];
  return {
    phases,
    seconds: Number(values.seconds),
    requests: Number(values.requests),
    connections: Number(values.connections),
    router: values.router,
    upstreamStream: values["upstream-stream"],
    tokens,
    routerPhases: phases.filter((p): p is RouterPhase => p !== "tokens"),
    // An empty --cpu-profile writes nothing, as before.
    cpuProfile: file ? { file, phase: values["cpu-profile-phase"] } : undefined,
  };
}
