import { type Distribution, lognormal, lognormalMedian, mixture } from "./distribution.ts";

/**
 * Presets of the parametric agent model. Figures are parameters fitted to the traces (tokens;
 * tool time in ms); the values that are assumptions rather than fits are marked *assumption*.
 */

export interface Clipped {
  dist: Distribution;
  min: number;
  max: number;
}

export interface PresetParams {
  name: string;
  description: string;
  /** Where the numbers come from. */
  source: string;
  /** N, LLM calls per program. */
  steps: Clipped;
  /** S, system-prompt tokens shared by every program of the workload. */
  sharedPrefixTokens: number;
  /** P0, the first prompt; `includesShared` says whether S is already inside it. */
  firstPrompt: { dist: Distribution; includesShared: boolean };
  /** c_t per phase (early / mid / late third of the program), clipped to [min, max]. */
  output: {
    byPhase: readonly [Distribution, Distribution, Distribution];
    min: number;
    max: number;
  };
  /** a, the share of each output kept in the next prompt. */
  keptOutputShare: number;
  /** o_t, observation tokens appended after each call. */
  observation: Clipped;
  /** T_t, tool time (ms), capped; `overheadMs` is added to every call (runtime overhead). */
  tool: { dist: Distribution; capMs: number; overheadMs: number };
  /** Interactive sessions: after `share` of the steps a human gap (ms) replaces the tool time. */
  humanGap?: { share: number; dist: Distribution };
  /** The agent writes its actions as text, not tool calls (`ProgramPlan.textActions`). */
  textActions?: true;
  /** The program launches sub-agents at some of its steps (`StepPlan.spawn`); absent = never. */
  subagents?: SubagentParams;
}

/**
 * Sub-agents (generator.ts `addSubagents`). After each step that ends in a tool call (not the
 * last, not one before a human turn), with probability `spawnShare` the answer launches k
 * sub-agents at once, k drawn from `countWeights`; the parent waits until the last has ended,
 * then `resume` more before its next call. A sub-agent's first prompt is its parent's first
 * prompt plus its brief; it then grows as a program of this shape does.
 */
export interface SubagentParams {
  /** Probability that a tool-call step's answer launches sub-agents. */
  spawnShare: number;
  /** Weights of k = 1, 2, 3, … sub-agents launched together (normalised). */
  countWeights: readonly number[];
  /** Calls per sub-agent. */
  steps: Clipped;
  /** The task the parent writes for it, appended after the parent's first prompt (tokens). */
  brief: Clipped;
  /** Output tokens per call. */
  output: Clipped;
  /** Observation tokens appended after each call (its whole answer is kept too). */
  observation: Clipped;
  /** Tool time between its calls (ms); it has no human turns. */
  tool: { dist: Distribution; capMs: number; overheadMs: number };
  /** The parent's gap between its last sub-agent's end and its next call (ms), capped. */
  resume: { dist: Distribution; capMs: number };
}

const MS_PER_S = 1000;

/** swe-bash tool model: 95.4% short docker-exec calls + a heavy tail, 60 s command timeout. */
const SWE_TOOL = {
  dist: mixture(
    { weight: 0.954, ...lognormal(5.57, 0.36) },
    { weight: 0.046, ...lognormal(8.04, 0.97) },
  ),
  capMs: 60_000,
  overheadMs: 0,
};

/** Output length of the DeepSeek bash agent: short tool calls + long reasoning/edit turns. */
function sweOutput(longShare: number): Distribution {
  return mixture(
    { weight: 1 - longShare, ...lognormal(4.35, 0.31) },
    { weight: longShare, ...lognormal(6.1, 0.6) },
  );
}

const SWE_BASH: PresetParams = {
  name: "swe-bash",
  description: "mini-swe-agent bash agent on SWE-bench, DeepSeek-V3 class (median 75 steps)",
  source: "fitted to the DeepSeek mini-swe-agent trace (SWE-agent/mini-swe-agent)",
  steps: { dist: lognormal(4.32, 0.42), min: 5, max: 250 },
  // *assumption*: only the system line and tool schema are shared across programs.
  sharedPrefixTokens: 200,
  firstPrompt: { dist: lognormal(7.28, 0.25), includesShared: false },
  output: { byPhase: [sweOutput(0.15), sweOutput(0.42), sweOutput(0.35)], min: 10, max: 4096 },
  keptOutputShare: 1,
  observation: { dist: lognormal(4.78, 1.11), min: 5, max: 4500 },
  tool: SWE_TOOL,
  // mini-swe-agent parses a bash block out of the answer's text; it calls no tools.
  textActions: true,
};

/** Gemini 3 Pro class: output LN(4.75, 1.22) scaled by m_phase = 1.04 / 1.17 / 0.79. */
const frontierOutput = (m: number) => lognormal(4.75 + Math.log(m), 1.22);

const SWE_BASH_FRONTIER: PresetParams = {
  ...SWE_BASH,
  name: "swe-bash-frontier",
  description: "mini-swe-agent bash agent, Gemini 3 Pro class (median 36 steps)",
  source: "fitted to the Gemini mini-swe-agent trace (SWE-agent/mini-swe-agent)",
  steps: { dist: lognormal(3.6, 0.42), min: 5, max: 250 },
  output: {
    byPhase: [frontierOutput(1.04), frontierOutput(1.17), frontierOutput(0.79)],
    min: 10,
    max: 8192,
  },
  observation: { dist: lognormal(4.65, 1.48), min: 5, max: 15_000 },
};

/** Gap before a human turn: LN(4.9, 2.0) in seconds. */
const CLAUDE_CODE_HUMAN_GAP = lognormal(4.9 + Math.log(MS_PER_S), 2.0);

const CLAUDE_CODE: PresetParams = {
  name: "claude-code",
  description: "interactive Claude-Code-like coding sessions: 15 K shared prefix, long contexts",
  source: "fitted to the kv-cache-tester Claude Code traces (callanjfox/kv-cache-tester)",
  steps: { dist: lognormal(3.55, 1.18), min: 3, max: 1200 },
  sharedPrefixTokens: 15_000,
  firstPrompt: {
    // 59% fresh sessions (median 17 K incl. S) + 41% resumed/large ones (median 114 K).
    dist: mixture(
      { weight: 0.59, ...lognormal(9.75, 0.3) },
      { weight: 0.41, ...lognormal(11.81, 0.73) },
    ),
    includesShared: true,
  },
  output: {
    byPhase: [lognormal(5.57, 0.9), lognormal(5.57, 0.9), lognormal(5.57, 0.9)],
    min: 1,
    max: 16_384,
  },
  keptOutputShare: 1,
  observation: { dist: lognormal(5.82, 1.81), min: 0, max: 650_000 },
  // Client gap after a tool_use step (an upper bound); the 1 h cap is an *assumption*.
  tool: { dist: lognormal(8.99, 1.65), capMs: 3_600_000, overheadMs: 0 },
  humanGap: { share: 0.14, dist: CLAUDE_CODE_HUMAN_GAP },
};

/**
 * Claude Code sessions that use sub-agents, fitted to the sessions of the same traces that
 * launched any: 17 of the 710, with 63 sub-agents between them (none launched its own). In the
 * traces a launch starts 1, 2, 3 or 4 sub-agents at once (20, 9, 7 and 1 of 37 launches), after
 * 37 of the sessions' 2,922 tool-call steps (1.27%), anywhere in the session; the parent sends
 * nothing while they run (59 of 63) and calls again a median 19 s after the last one ended.
 * These sessions are long (steps p10/p50/p90 20/133/395, vs 35 median over all sessions), open
 * fresh (first prompt median 17.9 K, 16 of 17 under 24 K) and have fewer human turns (5% of
 * gaps). A sub-agent: calls p10/p50/p90 5/11/17 (2–24), first prompt p50 10.3 K of which its
 * own tool schema and system prompt ≈ 8.7 K and the brief its parent wrote ≈ 1.7 K, output
 * p50 235, observations p50 2.3 K (it reads files: its last prompt is p50 70 K), 4 s between
 * calls (1 s resolution), ≈ 2 min in all.
 *
 * What it shares with its parent cannot be measured (the traces hash blocks per session), so
 * *assumption*: a sub-agent's conversation opens with its parent's first prompt, system prompt
 * and task message token for token, then its brief, so its first prompt is ≈ 19 K (P0 + brief)
 * rather than the measured 10.3 K, and it runs on the parent's model. In Claude Code the Explore
 * sub-agent (55 of the 63) has its own smaller tool set and system prompt, gets only the brief,
 * and runs on a smaller model; the model keeps the shape (a fresh, short, fast-growing context
 * launched mid-session) and makes the prefix it shares with its parent real, which is what
 * placing a child beside its parent can exploit.
 */
const CLAUDE_CODE_SUBAGENTS: PresetParams = {
  ...CLAUDE_CODE,
  name: "claude-code-subagents",
  description:
    "claude-code sessions that launch sub-agents (1–4 at once, ≈ 11 calls each) and wait on them",
  source: "fitted to the kv-cache-tester Claude Code sessions with sub-agents (17 of 710)",
  steps: { dist: lognormal(4.83, 1.03), min: 3, max: 1200 },
  // claude-code's fresh-session component (median 17 K): these sessions open fresh.
  firstPrompt: { dist: lognormal(9.75, 0.3), includesShared: true },
  humanGap: { share: 0.05, dist: CLAUDE_CODE_HUMAN_GAP },
  subagents: {
    spawnShare: 0.0127,
    countWeights: [20, 9, 7, 1],
    // The 50-call cap is an *assumption* (the traces' longest sub-agent made 24).
    steps: { dist: lognormal(2.26, 0.5), min: 2, max: 50 },
    // Clip bounds *assumption* (measured 167–9,536).
    brief: { dist: lognormal(7.29, 0.92), min: 100, max: 20_000 },
    output: { dist: lognormal(5.62, 0.85), min: 1, max: 16_384 },
    observation: { dist: lognormal(7.58, 1.55), min: 1, max: 650_000 },
    // The 10 min cap is an *assumption* (the longest measured gap is 133 s).
    tool: { dist: lognormal(8.56, 0.94), capMs: 600_000, overheadMs: 0 },
    // Capped as the preset's tool gaps are.
    resume: { dist: lognormal(9.89, 0.86), capMs: CLAUDE_CODE.tool.capMs },
  },
};

/**
 * Tool-mix presets (from ThunderAgent's Fig. 9, *assumption*: each bucket lognormal with that
 * median and p95). Token shape: the frontier bash agent, capped at 50 rounds (ThunderAgent's
 * ToolOrchestra `--max-rounds 50` and OpenHands `max_iterations 50`).
 */
const TOOL_MIX_STEPS = { dist: lognormal(3.6, 0.42), min: 3, max: 50 };

const SEARCH_AGENT: PresetParams = {
  ...SWE_BASH_FRONTIER,
  name: "search-agent",
  description: "agent calling a remote search/retrieval API (3 s typical, 2% tail near 35 s)",
  source: "tool times after ThunderAgent Fig. 9 (HLE search)",
  steps: TOOL_MIX_STEPS,
  tool: {
    dist: mixture(
      { weight: 0.98, ...lognormalMedian(3000, 0.3) },
      { weight: 0.02, ...lognormalMedian(35_000, 0.6) },
    ),
    capMs: 600_000,
    overheadMs: 0,
  },
};

const LLM_TOOL_AGENT: PresetParams = {
  ...SEARCH_AGENT,
  name: "llm-tool-agent",
  description: "orchestrator calling a remote expert LLM as a tool (10 s median, heavy tail)",
  source: "tool times after ThunderAgent Fig. 9 (HLE enhance_reasoning)",
  tool: { dist: lognormalMedian(10_000, 1.1), capMs: 600_000, overheadMs: 0 },
};

const SANDBOX_AGENT: PresetParams = {
  ...SEARCH_AGENT,
  name: "sandbox-agent",
  description: "science agent executing bash/python in a sandbox (6 s median, p99 minutes)",
  source: "tool times after ThunderAgent Fig. 9 (ScienceAgentBench)",
  tool: { dist: lognormalMedian(6000, 1.5), capMs: 600_000, overheadMs: 0 },
};

/** *assumption*: swe-bash tools + 0.5 s runtime overhead, at most 100 iterations. */
const OPENHANDS_LIKE: PresetParams = {
  ...SWE_BASH,
  name: "openhands-like",
  description: "OpenHands-style SWE agent: swe-bash shape, +0.5 s runtime overhead, ≤100 steps",
  source: "OpenHands-like agent (assumption)",
  steps: { dist: lognormal(4.32, 0.42), min: 5, max: 100 },
  tool: { ...SWE_TOOL, overheadMs: 500 },
};

/**
 * Chat sessions: the interactive traffic a priority class protects from agent batches (a run
 * mixes it with agents, `--workload mix:chat@interactive=0.2,...`). Token shape of vLLM's
 * synthetic multi-turn benchmark (500-token common
 * prefix, a user prefix of mean ≈ 1000 tokens, 80–120 output tokens and 120–160 new user tokens
 * per turn); fewer turns than its 12–18 (*assumption*: median 4, at most 18); between turns a
 * human think time, lognormal with median 10 s and σ 1 (*assumption*, from the Claude Code
 * client think time p25/p50/p75 = 6/10/30 s of the same section).
 */
const CHAT_FIRST_PROMPT_SIGMA = 0.6;
const CHAT_THINK = lognormalMedian(10 * MS_PER_S, 1);
const CHAT_OUTPUT = lognormalMedian(100, 0.15);

const CHAT: PresetParams = {
  name: "chat",
  description:
    "interactive chat sessions: short prompts, few turns, human think time (10 s median)",
  source: "vLLM multi-turn benchmark shape; kv-cache-tester think times",
  steps: { dist: lognormalMedian(4, 0.6), min: 1, max: 18 },
  sharedPrefixTokens: 500,
  firstPrompt: {
    // Mean 1000: μ = ln 1000 − σ² / 2.
    dist: lognormal(Math.log(1000) - CHAT_FIRST_PROMPT_SIGMA ** 2 / 2, CHAT_FIRST_PROMPT_SIGMA),
    includesShared: false,
  },
  output: { byPhase: [CHAT_OUTPUT, CHAT_OUTPUT, CHAT_OUTPUT], min: 80, max: 120 },
  keptOutputShare: 1,
  observation: { dist: lognormalMedian(140, 0.08), min: 120, max: 160 },
  // Every gap is a human turn (`humanGap.share` 1); the tool model is never drawn.
  tool: { dist: CHAT_THINK, capMs: 10 * 60 * MS_PER_S, overheadMs: 0 },
  humanGap: { share: 1, dist: CHAT_THINK },
};

export const PRESETS: Readonly<Record<string, PresetParams>> = Object.fromEntries(
  [
    SWE_BASH,
    SWE_BASH_FRONTIER,
    CLAUDE_CODE,
    CLAUDE_CODE_SUBAGENTS,
    SEARCH_AGENT,
    LLM_TOOL_AGENT,
    SANDBOX_AGENT,
    OPENHANDS_LIKE,
    CHAT,
  ].map((p) => [p.name, p]),
);

export function presetNames(): string[] {
  return Object.keys(PRESETS);
}
