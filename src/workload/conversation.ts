import {
  type ChatMessage,
  GENERATION_PROMPT_OVERHEAD,
  OVERHEAD_PER_MESSAGE,
} from "../engine/chat-template.ts";
import { countTokens, textOfTokens } from "../engine/tokenizer.ts";
import { deriveSeed } from "./prng.ts";
import type { ProgramPlan, Workload } from "./types.ts";

/**
 * A program's conversation, step by step: the messages of step i are those of step i−1, then
 * the assistant's answer to step i−1, then the tool observation. Every prompt therefore
 * extends the previous one (contexts never shrink, ≈ 99% reusable
 * prefix) and all programs of a workload open with the same system prompt.
 *
 * Sizes come from the chat template's fixed costs (src/engine/chat-template.ts: 4 tokens per
 * message + 2 for the generation prompt) and `textOfTokens`, so the simulated backend counts
 * exactly the plan's prompt tokens. The layout (numbers only) is separate from the text, so
 * the simulator can size a step without rendering it.
 *
 * Layout cases, step i of plan with prompts P and completions c:
 *   1. i = 0: [system S', user task]; S' = min(S, room), so the shared prefix shrinks only
 *      when P0 itself is smaller than it (textOfTokens(n) is a prefix of textOfTokens(n + k)).
 *   2. P_i < COMPACTION_FRACTION × previous prompt (a context compaction): a fresh context
 *      laid out as in case 1 ("start a fresh context").
 *   3. otherwise append [assistant A, user O] with A + O = P_i − prev − 2 × 4:
 *      A = c_{i−1} normally; when the trace grew by less (hidden reasoning not kept in
 *      history) A shrinks to fit; A ≥ 1 and O ≥ 1 always, so a shortfall makes the
 *      prompt overshoot P_i a little and the next observation absorbs the excess.
 *
 * A sub-agent (`plan.subagent`) opens, in cases 1 and 2, with its parent's step-0 messages as
 * they are, [system S', user task] of the parent's first prompt with the parent's own text, then
 * one more user message, its brief, of the remaining size: its prompt repeats the parent's first
 * prompt token for token up to the parent's generation prompt, so the prefix the parent has
 * cached serves it. Its own texts (brief, answers, observations) are seeded by (program index,
 * sub-agent ordinal), apart from its parent's and its siblings'.
 */

/** Fraction below which a shrinking prompt is a compaction (case 2); *assumption*. */
export const COMPACTION_FRACTION = 0.5;
const MIN_CONTENT_TOKENS = 1;
const FIRST_PROMPT_OVERHEAD = 2 * OVERHEAD_PER_MESSAGE + GENERATION_PROMPT_OVERHEAD;
const TURN_OVERHEAD = 2 * OVERHEAD_PER_MESSAGE;
/** A sub-agent's brief is one more message after its parent's first prompt's messages. */
export const BRIEF_MESSAGE_OVERHEAD = OVERHEAD_PER_MESSAGE;
/**
 * Seed streams: one shared system prompt; per-program texts keyed by (program, step, part);
 * a sub-agent's own texts keyed by (program, sub-agent, step, part).
 */
const STREAM_SYSTEM = 11;
const STREAM_TEXT = 12;
const STREAM_SUBAGENT_TEXT = 13;
const PART_TASK = 0;
const PART_OBSERVATION = 1;
const PART_ASSISTANT = 2;

export interface StepLayout {
  /** Case 1 or 2: this step opens a new context with [system, task]. */
  fresh: boolean;
  systemTokens: number;
  /** Content tokens of the assistant message appended before this step (0 when fresh). */
  assistantTokens: number;
  /**
   * Content tokens of the new user message: the task when fresh (a sub-agent's brief), else
   * the observation.
   */
  userTokens: number;
  /** A sub-agent's fresh step: its parent's task message, between the system prompt and brief. */
  parentTaskTokens?: number;
  /** Prompt tokens as the chat template counts them. */
  promptTokens: number;
}

function freshLayout(target: number, shared: number): StepLayout {
  const room = Math.max(0, target - FIRST_PROMPT_OVERHEAD - MIN_CONTENT_TOKENS);
  const systemTokens = Math.min(shared, room);
  const userTokens = Math.max(MIN_CONTENT_TOKENS, target - FIRST_PROMPT_OVERHEAD - systemTokens);
  const promptTokens = FIRST_PROMPT_OVERHEAD + systemTokens + userTokens;
  return { fresh: true, systemTokens, assistantTokens: 0, userTokens, promptTokens };
}

/** A sub-agent's fresh context: its parent's first prompt's messages, then its brief. */
function subagentLayout(target: number, parentFirst: number, shared: number): StepLayout {
  const parent = freshLayout(parentFirst, shared);
  const before = parent.promptTokens + BRIEF_MESSAGE_OVERHEAD;
  const userTokens = Math.max(MIN_CONTENT_TOKENS, target - before);
  return {
    fresh: true,
    systemTokens: parent.systemTokens,
    assistantTokens: 0,
    userTokens,
    promptTokens: before + userTokens,
    parentTaskTokens: parent.userTokens,
  };
}

/** The sizes of every step's messages; pure arithmetic on the plan. */
export function layoutSteps(plan: ProgramPlan, sharedPrefixTokens: number): StepLayout[] {
  const sub = plan.subagent;
  const fresh = (target: number) =>
    sub === undefined
      ? freshLayout(target, sharedPrefixTokens)
      : subagentLayout(target, sub.parentFirstPromptTokens, sharedPrefixTokens);
  const out: StepLayout[] = [];
  plan.steps.forEach((step, i) => {
    const prev = out[i - 1];
    if (i === 0 || step.promptTokens < prev.promptTokens * COMPACTION_FRACTION) {
      out.push(fresh(step.promptTokens));
      return;
    }
    const content = step.promptTokens - prev.promptTokens - TURN_OVERHEAD;
    const completion = plan.steps[i - 1].completionTokens;
    const assistantTokens = Math.max(
      MIN_CONTENT_TOKENS,
      Math.min(completion, content - MIN_CONTENT_TOKENS),
    );
    const userTokens = Math.max(MIN_CONTENT_TOKENS, content - assistantTokens);
    out.push({
      fresh: false,
      systemTokens: prev.systemTokens,
      assistantTokens,
      userTokens,
      promptTokens: prev.promptTokens + TURN_OVERHEAD + assistantTokens + userTokens,
    });
  });
  return out;
}

export interface ConversationOptions {
  /** The workload's seed: the same seed gives the same text, hence the same token ids. */
  workloadSeed: number;
  sharedPrefixTokens: number;
  /** Gives a mix component its own system prompt text (absent: the workload's). */
  systemTag?: number;
}

/** A plan's conversation options within its workload (a mix component's own system prompt). */
export function conversationOptionsFor(
  workload: Pick<Workload, "seed" | "sharedPrefixTokens">,
  plan: ProgramPlan,
): ConversationOptions {
  const own = plan.systemPrompt;
  return own === undefined
    ? { workloadSeed: workload.seed, sharedPrefixTokens: workload.sharedPrefixTokens }
    : { workloadSeed: workload.seed, sharedPrefixTokens: own.tokens, systemTag: own.tag };
}

export interface Conversation {
  readonly layout: readonly StepLayout[];
  /**
   * Messages of step `stepIndex`. `assistantTexts[k]`, when given, is the text step k really
   * produced: it is sent back as the assistant turn (so the engine's cached output is reused)
   * if it has exactly the planned size; otherwise a synthetic text of that size stands in.
   */
  messagesFor(stepIndex: number, assistantTexts?: readonly (string | undefined)[]): ChatMessage[];
}

/** Incremental builder: text is generated once per message and memoised. */
export function createConversation(plan: ProgramPlan, options: ConversationOptions): Conversation {
  const layout = layoutSteps(plan, options.sharedPrefixTokens);
  const sub = plan.subagent;
  const programSeed = (step: number, part: number) =>
    deriveSeed(options.workloadSeed, STREAM_TEXT, plan.index, step, part);
  const seed =
    sub === undefined
      ? programSeed
      : (step: number, part: number) =>
          deriveSeed(
            options.workloadSeed,
            STREAM_SUBAGENT_TEXT,
            plan.index,
            sub.ordinal,
            step,
            part,
          );
  const systemSeed =
    options.systemTag === undefined
      ? deriveSeed(options.workloadSeed, STREAM_SYSTEM)
      : deriveSeed(options.workloadSeed, STREAM_SYSTEM, options.systemTag);
  // Per step: the messages this step adds (synthetic assistant text filled lazily).
  const added: ChatMessage[][] = [];
  const addedFor = (i: number): ChatMessage[] => {
    if (added[i]) return added[i];
    const l = layout[i];
    if (!l.fresh) {
      added[i] = [
        { role: "assistant", content: textOfTokens(l.assistantTokens, seed(i, PART_ASSISTANT)) },
        { role: "user", content: textOfTokens(l.userTokens, seed(i, PART_OBSERVATION)) },
      ];
      return added[i];
    }
    added[i] = [{ role: "system", content: textOfTokens(l.systemTokens, systemSeed) }];
    if (l.parentTaskTokens !== undefined) {
      // A sub-agent: its parent's own task text, the one the parent's step 0 sent.
      const task = textOfTokens(l.parentTaskTokens, programSeed(0, PART_TASK));
      added[i].push({ role: "user", content: task });
    }
    added[i].push({ role: "user", content: textOfTokens(l.userTokens, seed(i, PART_TASK)) });
    return added[i];
  };
  return {
    layout,
    messagesFor(stepIndex, assistantTexts) {
      if (!Number.isInteger(stepIndex) || stepIndex < 0 || stepIndex >= layout.length) {
        throw new RangeError(`step ${stepIndex} out of range 0..${layout.length - 1}`);
      }
      let start = stepIndex;
      while (!layout[start].fresh) start--;
      const messages: ChatMessage[] = [];
      for (let i = start; i <= stepIndex; i++) {
        const added = addedFor(i);
        if (layout[i].fresh) {
          messages.push(...added);
          continue;
        }
        const [first, second] = added;
        const real = assistantTexts?.[i - 1];
        const useReal = real !== undefined && countTokens(real) === layout[i].assistantTokens;
        messages.push(useReal ? { role: "assistant", content: real } : first, second);
      }
      return messages;
    },
  };
}

/** One step's messages, built from scratch (the simulator's entry point). */
export function buildStepMessages(
  plan: ProgramPlan,
  stepIndex: number,
  options: ConversationOptions,
  assistantTexts?: readonly (string | undefined)[],
): ChatMessage[] {
  return createConversation(plan, options).messagesFor(stepIndex, assistantTexts);
}
