/**
 * The settings that choose a workload, shared by `maitred bench` and `maitred simulate`, and
 * the workload they make together.
 */
import { type Setting, setting } from "../config/setting.ts";
import { boolean, duration, integer, parsedText, positive, share, text } from "../config/values.ts";
import { parseClassMix } from "./class-mix.ts";
import { DEFAULT_WORKLOAD, parseWorkloadArg, SHIPPED_TRACES } from "./load-workload.ts";
import { presetNames } from "./presets.ts";
import type { WorkloadSpec } from "./types.ts";
import { DEFAULT_SEED, DEFAULT_STAGGER_MS } from "./workload.ts";

const MAX_INT = 2 ** 31 - 1;

export const WORKLOAD_SETTINGS = {
  workload: setting({
    key: "workload",
    arg: "<name|file|mix>",
    help: `preset or trace: ${[...presetNames(), ...Object.keys(SHIPPED_TRACES)].join(", ")}, a .jsonl path, or a mix of them, each with its share of the concurrency slots and an optional class: mix:chat@interactive=0.2,deepseek@bulk=0.8`,
    default: DEFAULT_WORKLOAD,
    schema: text(),
  }),
  classMix: setting({
    key: "class-mix",
    arg: "<classes>",
    help: "priority class per program, drawn by seed from weights, e.g. interactive=0.2,bulk=0.8 (programs of a mix component with @class keep it)",
    schema: parsedText((t) => parseClassMix(t)),
  }),
  toolTimeScale: setting({
    key: "tool-time-scale",
    arg: "<x>",
    help: "multiply every tool (and human) time of the workload by x: what if the tools were slower",
    default: 1,
    schema: positive(),
  }),
  unreleased: setting({
    key: "unreleased",
    arg: "<share>",
    help: "share of programs (0–1, drawn per program by seed) whose client never releases them when they end, as a client that forgets program_final: the router keeps them until its idle timeout",
    default: 0,
    schema: share(),
  }),
  subagentLink: setting({
    key: "subagent-link",
    arg: "<on|off>",
    help: "whether sub-agents' requests name their parent (x-parent-program-id; claude-code-subagents): off sends them as unrelated programs, to compare a router that knows the tree with one that does not",
    default: "on",
    schema: boolean("must be on or off"),
  }),
  seed: setting({
    key: "seed",
    arg: "<n>",
    help: "seeds program order, sampled values and text",
    default: DEFAULT_SEED,
    schema: integer(0, MAX_INT),
  }),
  stagger: setting({
    key: "stagger",
    arg: "<duration>",
    help: "gap between program start offsets",
    default: `${DEFAULT_STAGGER_MS}ms`,
    schema: duration({ allowZero: true }),
  }),
} satisfies Record<string, Setting<unknown>>;

/** The workload those settings name, its programs cut at `maxContextTokens` when given. */
export function workloadSpecOf(
  v: {
    workload: string;
    classMix?: WorkloadSpec["classMix"];
    toolTimeScale: number;
    unreleased: number;
    /** Absent: on. */
    subagentLink?: boolean;
    seed: number;
    stagger: number;
  },
  maxContextTokens?: number,
): WorkloadSpec {
  const spec = parseWorkloadArg(v.workload, {
    seed: v.seed,
    staggerMs: v.stagger,
    ...(maxContextTokens !== undefined ? { maxContextTokens } : {}),
  });
  if (v.classMix !== undefined) spec.classMix = v.classMix;
  if (v.toolTimeScale !== 1) spec.toolTimeScale = v.toolTimeScale;
  if (v.unreleased > 0) spec.unreleased = v.unreleased;
  if (v.subagentLink === false) spec.subagentLink = false;
  return spec;
}
