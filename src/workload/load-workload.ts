import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import {
  PRIORITY_CLASSES,
  type PriorityClass,
  parsePriorityClass,
} from "../core/priority/priority-classes.ts";
import { ConfigError } from "../errors.ts";
import { parseWeights } from "./class-mix.ts";
import { createMixWorkload, MIX_PREFIX } from "./mix-workload.ts";
import { PRESETS, presetNames } from "./presets.ts";
import { withSubagentLink } from "./subagents.ts";
import { scaleToolTimes } from "./tool-time-scale.ts";
import { parseTrace } from "./trace-parser.ts";
import type {
  MixComponent,
  MixComponentSpec,
  SingleWorkloadSpec,
  Workload,
  WorkloadSpec,
} from "./types.ts";
import { markUnreleased } from "./unreleased.ts";
import { componentSpecOf, createWorkload, mixOptionsOf } from "./workload.ts";

/**
 * The file side of workloads: shipped trace names, `--workload` parsing and reading trace
 * files. Everything else about a workload is pure (workload.ts).
 */

/** Traces shipped in src/workload/traces (attribution and licenses in its README.md). */
export const SHIPPED_TRACES: Readonly<Record<string, string>> = {
  deepseek: "mini_swe_agent_deepseek_swebench.jsonl",
  gemini: "mini_swe_agent_gemini3pro_swebench_verified.jsonl",
};

/** The only trace with measured millisecond tool times. */
export const DEFAULT_WORKLOAD = "deepseek";

export function shippedTracePath(name: string): string {
  return fileURLToPath(new URL(`./traces/${SHIPPED_TRACES[name]}`, import.meta.url));
}

/**
 * `--workload VALUE`: a preset name, a shipped trace name, a path to a JSONL trace, or a mix of
 * those (`mix:chat@interactive=0.2,deepseek@bulk=0.8`). `common` carries seed, stagger and
 * context limit.
 */
export function parseWorkloadArg(
  value: string,
  common: Pick<WorkloadSpec, "seed" | "staggerMs" | "maxContextTokens"> = {},
  field = "workload",
): WorkloadSpec {
  const v = value.trim();
  if (v === "") throw new ConfigError(field, "must not be empty");
  if (v.startsWith(MIX_PREFIX)) return { kind: "mix", components: parseMix(v, field), ...common };
  return parseSingle(v, common, field);
}

/**
 * `mix:NAME[@CLASS]=WEIGHT,...` (mix-workload.ts): each NAME a preset, a shipped trace or a
 * trace path, CLASS a priority class, WEIGHT its share of the concurrency slots.
 */
function parseMix(v: string, field: string): MixComponentSpec[] {
  return parseWeights(v.slice(MIX_PREFIX.length), field, (written) => {
    const at = written.lastIndexOf("@");
    const name = (at < 0 ? written : written.slice(0, at)).trim();
    if (name.startsWith(MIX_PREFIX)) throw new ConfigError(field, "a mix cannot contain a mix");
    let priorityClass: PriorityClass | undefined;
    if (at >= 0) {
      const cls = parsePriorityClass(written.slice(at + 1));
      if (cls === null) {
        throw new ConfigError(
          field,
          `unknown priority class in "${written}"; classes: ${PRIORITY_CLASSES.join(", ")}`,
        );
      }
      priorityClass = cls;
    }
    const spec = parseSingle(name, {}, field);
    return priorityClass === undefined ? { name, spec } : { name, spec, priorityClass };
  }).map(({ item, weight }) => ({ ...item, weight }));
}

function parseSingle(
  v: string,
  common: Pick<WorkloadSpec, "seed" | "staggerMs" | "maxContextTokens">,
  field: string,
): SingleWorkloadSpec {
  if (PRESETS[v]) return { kind: "preset", name: v, ...common };
  if (SHIPPED_TRACES[v] || v.endsWith(".jsonl") || v.includes("/")) {
    return { kind: "trace", file: v, ...common };
  }
  throw new ConfigError(
    field,
    `unknown workload "${v}": expected a preset (${presetNames().join(", ")}), a shipped trace (${Object.keys(SHIPPED_TRACES).join(", ")}) or a path to a .jsonl trace`,
  );
}

/**
 * The spec with its programs cut at `maxContextTokens` (the served max_model_len), unless it
 * already has a smaller limit.
 */
export function limitContext(spec: WorkloadSpec, maxContextTokens: number): WorkloadSpec {
  const current = spec.maxContextTokens;
  return {
    ...spec,
    maxContextTokens:
      current === undefined ? maxContextTokens : Math.min(current, maxContextTokens),
  };
}

/** Resolve a spec, reading its trace files if it has any. */
export async function loadWorkload(spec: WorkloadSpec): Promise<Workload> {
  const scaled = await loadScaled(spec, spec.toolTimeScale ?? 1);
  return withSubagentLink(markUnreleased(scaled, spec.unreleased ?? 0), spec.subagentLink);
}

/**
 * Tool times are scaled on every single workload, before a mix puts its components
 * together, so both ways a driver draws a mix's programs (`programAt`, `mix.programOf`)
 * see them scaled, and once.
 */
async function loadScaled(spec: WorkloadSpec, toolTimeScale: number): Promise<Workload> {
  if (spec.kind === "mix") {
    const parts: MixComponent[] = [];
    for (const c of spec.components) {
      parts.push({
        ...c,
        workload: await loadScaled(componentSpecOf(spec, c.spec), toolTimeScale),
      });
    }
    return createMixWorkload(parts, mixOptionsOf(spec));
  }
  return scaleToolTimes(await loadSingle(spec), toolTimeScale);
}

async function loadSingle(spec: SingleWorkloadSpec): Promise<Workload> {
  if (spec.kind !== "trace") return createWorkload(spec);
  const shipped = SHIPPED_TRACES[spec.file] !== undefined;
  const path = shipped ? shippedTracePath(spec.file) : spec.file;
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new ConfigError("workload", `cannot read trace ${path}: ${(err as Error).message}`);
  }
  const name = shipped ? spec.file : basename(path, ".jsonl");
  return createWorkload(spec, parseTrace(text, path), name);
}
