/**
 * `npm run bench:engine`: the simulated engine alone, in virtual time. N agent programs share one
 * simulated engine for a simulated span; each program is a growing conversation: every turn
 * appends the previous output and a tool observation, then waits a tool-time gap. The program
 * shape follows the `swe-bash` preset (mini-swe-agent + DeepSeek on SWE-bench Lite): steps
 * LN(4.32, 0.42), first prompt 200 shared + LN(7.28, 0.25), output mixture short LN(4.35, 0.31)
 * / long LN(6.10, 0.60), observation LN(4.78, 1.11), tool time 95.4 % LN(5.57, 0.36) ms else
 * LN(8.04, 0.97) ms capped at 60 s. What it measures is the engine's own speed: simulated
 * seconds per wall second, with the steps, preemptions and prefix hits that explain it.
 */
import { performance } from "node:perf_hooks";
import { integer, positive } from "../../config/values.ts";
import { generationPromptTokens, messageTokens } from "../../engine/chat-template.ts";
import { createEngine } from "../../engine/engine.ts";
import { engineConfigFromProfile } from "../../engine/timing.ts";
import { decode, textOfTokens } from "../../engine/tokenizer.ts";
import type { RequestOutput } from "../../engine/types.ts";
import { attachEngine, createEventKernel } from "../../engine/virtual-driver.ts";
import { createRng } from "../../workload/prng.ts";
import type { ScriptSpec } from "../script-args.ts";
import { jsonFlag, profileFlag, seedFlag } from "../script-flags.ts";

export const ENGINE_SPEC = {
  name: "bench:engine",
  summary:
    "The simulated engine alone, in virtual time: N growing agent conversations on one engine; simulated seconds per wall second, steps, preemptions, prefix hits.",
  runtime:
    "about 4 s on an idle core (recorded: one simulated hour of 128 agents in 3.7 s); scales with --agents × --hours",
  flags: {
    agents: {
      arg: "<n>",
      default: "128",
      description: "agent programs sharing the engine",
      check: integer(1, 1_000_000),
    },
    hours: { arg: "<h>", default: "1", description: "simulated hours", check: positive() },
    profile: profileFlag("llama-3.1-8b-h100", "the engine's timing profile"),
    seed: seedFlag("seeds the programs and the engine"),
    json: jsonFlag("also write the figures as JSON"),
  },
} satisfies ScriptSpec;

/** The swe-bash preset's program shape (log-normal parameters of its fitted distributions). */
const SHARED_PREFIX_TOKENS = 200;
const STEPS = { mu: 4.32, sigma: 0.42, min: 5, max: 250 };
const TASK = { mu: 7.28, sigma: 0.25 };
const OUT_SHORT = { mu: 4.35, sigma: 0.31 };
const OUT_LONG = { mu: 6.1, sigma: 0.6 };
/** Long answers grow more common after the first third of a program's steps. */
const LONG_SHARE_BY_THIRD = [0.15, 0.42, 0.35];
const OUT_CLIP = { min: 10, max: 4096 };
const OBS = { mu: 4.78, sigma: 1.11, min: 5, max: 4500 };
const TOOL_FAST_SHARE = 0.954;
const TOOL_FAST_MS = { mu: 5.57, sigma: 0.36 };
const TOOL_SLOW_MS = { mu: 8.04, sigma: 0.97 };
const TOOL_CAP_MS = 60_000;

export interface EngineSpeedOptions {
  agents: number;
  hours: number;
  /** The engine's timing profile (src/engine/timing.ts). */
  profile: string;
  /** Seeds the programs and the engine: the same seed gives the same figures but the wall's. */
  seed: number;
}

/** The figures, in the order and with the names the script prints and writes as JSON. */
export interface EngineSpeedResult {
  profile: string;
  agents: number;
  simulatedSeconds: number;
  wallSeconds: number;
  simulatedSecondsPerWallSecond: number;
  steps: number;
  stepsPerWallSecond: number;
  busyFraction: number;
  preemptions: number;
  prefixHitRate: number;
  recomputedTokens: number;
  promptTokens: number;
  generationTokens: number;
  turnsCompleted: number;
  programsCompleted: number;
  meanTtftSeconds: number;
  finalRunning: number;
  finalWaiting: number;
  finalKvUsage: number;
}

interface Program {
  id: number;
  history: number[];
  steps: number;
  step: number;
  output: number[];
  turnId: string;
}

/** Runs `agents` programs (each replaced by a new one when it ends) for `hours` of virtual time. */
export function runEngineSpeed(o: EngineSpeedOptions): EngineSpeedResult {
  const horizonS = o.hours * 3600;
  const rand = createRng(o.seed).next;
  const lognormal = ({ mu, sigma }: { mu: number; sigma: number }) => {
    const u = 1 - rand();
    const v = rand();
    return Math.exp(mu + sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v));
  };
  const clip = (x: number, min: number, max: number) => Math.round(Math.min(max, Math.max(min, x)));

  const config = engineConfigFromProfile(o.profile, { seed: o.seed });
  const engine = createEngine(config);
  const kernel = createEventKernel();
  const sharedSystem = messageTokens({
    role: "system",
    content: textOfTokens(SHARED_PREFIX_TOKENS, 0),
  });
  const genPrompt = generationPromptTokens();
  const count = { started: 0, done: 0, turns: 0 };
  let textSeed = 1;
  const programs = new Map<string, Program>();

  function startProgram(): void {
    const task = clip(lognormal(TASK), 1, 100_000);
    const p: Program = {
      id: count.started,
      history: [
        ...sharedSystem,
        ...messageTokens({ role: "user", content: textOfTokens(task, textSeed++) }),
      ],
      steps: clip(lognormal(STEPS), STEPS.min, STEPS.max),
      step: 0,
      output: [],
      turnId: "",
    };
    count.started++;
    submitTurn(p);
  }

  function finishProgram(): void {
    count.done++;
    startProgram();
  }

  function submitTurn(p: Program): void {
    const third = Math.min(2, Math.floor((3 * p.step) / p.steps));
    const long = rand() < LONG_SHARE_BY_THIRD[third];
    const maxTokens = clip(lognormal(long ? OUT_LONG : OUT_SHORT), OUT_CLIP.min, OUT_CLIP.max);
    const prompt = p.history.concat(genPrompt);
    // A conversation that has outgrown the context ends, as an agent's would.
    if (prompt.length + maxTokens >= config.maxModelLen) {
      finishProgram();
      return;
    }
    p.turnId = `p${p.id}-${p.step}`;
    p.output = [];
    programs.set(p.turnId, p);
    adapter.submit({
      id: p.turnId,
      promptTokens: prompt,
      maxTokens,
      minTokens: 0,
      ignoreEos: true,
    });
  }

  function onOutput(out: RequestOutput): void {
    const p = programs.get(out.id);
    if (p === undefined) return;
    for (const t of out.newTokenIds) p.output.push(t);
    if (out.finishReason === undefined) return;
    programs.delete(out.id);
    count.turns++;
    p.step++;
    if (p.step >= p.steps) {
      finishProgram();
      return;
    }
    // The agent sends its answer back verbatim, then the tool's observation.
    for (const t of messageTokens({ role: "assistant", content: decode(p.output) }))
      p.history.push(t);
    const obs = clip(lognormal(OBS), OBS.min, OBS.max);
    for (const t of messageTokens({ role: "tool", content: textOfTokens(obs, textSeed++) }))
      p.history.push(t);
    const toolMs = Math.min(
      TOOL_CAP_MS,
      lognormal(rand() < TOOL_FAST_SHARE ? TOOL_FAST_MS : TOOL_SLOW_MS),
    );
    kernel.after(toolMs / 1000, () => submitTurn(p));
  }

  const adapter = attachEngine(kernel, engine, { onOutput });
  for (let i = 0; i < o.agents; i++) kernel.schedule(0, startProgram);

  const wallStart = performance.now();
  kernel.run(horizonS);
  const wallS = (performance.now() - wallStart) / 1000;

  const s = engine.stats();
  return {
    profile: o.profile,
    agents: o.agents,
    simulatedSeconds: horizonS,
    wallSeconds: Number(wallS.toFixed(3)),
    simulatedSecondsPerWallSecond: Number((horizonS / wallS).toFixed(1)),
    steps: s.steps,
    stepsPerWallSecond: Math.round(s.steps / wallS),
    busyFraction: Number((s.busyTime / horizonS).toFixed(4)),
    preemptions: s.numPreemptions,
    prefixHitRate: Number((s.prefixCacheHits / Math.max(1, s.prefixCacheQueries)).toFixed(4)),
    recomputedTokens: s.recomputedTokens,
    promptTokens: s.promptTokens,
    generationTokens: s.generationTokens,
    turnsCompleted: count.turns,
    programsCompleted: count.done,
    meanTtftSeconds: Number(
      (s.timeToFirstToken.sum / Math.max(1, s.timeToFirstToken.count)).toFixed(3),
    ),
    finalRunning: s.numRunning,
    finalWaiting: s.numWaiting,
    finalKvUsage: Number(s.kvCacheUsage.toFixed(4)),
  };
}

/** One line per figure, its name padded to one column: what the script prints. */
export const engineSpeedLines = (r: EngineSpeedResult): string[] =>
  Object.entries(r).map(([k, v]) => `${k.padEnd(31)} ${v}`);
