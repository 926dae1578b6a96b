import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError } from "../errors.ts";
import { PRESETS, presetNames } from "./presets.ts";
import { parseTrace } from "./trace-parser.ts";
import type { Workload, WorkloadSpec } from "./types.ts";
import { createWorkload } from "./workload.ts";

/**
 * The file side of workloads: shipped trace names, `--workload` parsing and reading trace
 * files. Everything else about a workload is pure (workload.ts).
 */

/** Traces shipped in src/workload/traces (attribution and licenses in its README.md). */
export const SHIPPED_TRACES: Readonly<Record<string, string>> = {
  deepseek: "mini_swe_agent_deepseek_swebench.jsonl",
  gemini: "mini_swe_agent_gemini3pro_swebench_verified.jsonl",
};

/** The only trace with measured millisecond tool times (agent-workloads.md §4). */
export const DEFAULT_WORKLOAD = "deepseek";

export function shippedTracePath(name: string): string {
  return fileURLToPath(new URL(`./traces/${SHIPPED_TRACES[name]}`, import.meta.url));
}

/**
 * `--workload VALUE`: a preset name, a shipped trace name or a path to a JSONL trace.
 * `common` carries seed, stagger and context limit.
 */
export function parseWorkloadArg(
  value: string,
  common: Pick<WorkloadSpec, "seed" | "staggerMs" | "maxContextTokens"> = {},
  field = "--workload",
): WorkloadSpec {
  const v = value.trim();
  if (v === "") throw new ConfigError(field, "must not be empty");
  if (PRESETS[v]) return { kind: "preset", name: v, ...common };
  if (SHIPPED_TRACES[v] || v.endsWith(".jsonl") || v.includes("/")) {
    return { kind: "trace", file: v, ...common };
  }
  throw new ConfigError(
    field,
    `unknown workload "${v}": expected a preset (${presetNames().join(", ")}), a shipped trace (${Object.keys(SHIPPED_TRACES).join(", ")}) or a path to a .jsonl trace`,
  );
}

/** Resolve a spec, reading its trace file if it has one. */
export async function loadWorkload(spec: WorkloadSpec): Promise<Workload> {
  if (spec.kind !== "trace") return createWorkload(spec);
  const shipped = SHIPPED_TRACES[spec.file] !== undefined;
  const path = shipped ? shippedTracePath(spec.file) : spec.file;
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new ConfigError("--workload", `cannot read trace ${path}: ${(err as Error).message}`);
  }
  const name = shipped ? spec.file : basename(path, ".jsonl");
  return createWorkload(spec, parseTrace(text, path), name);
}
