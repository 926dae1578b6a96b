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
  humanGap: { share: 0.14, dist: lognormal(4.9 + Math.log(MS_PER_S), 2.0) },
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
