import {
  type ChatMessage,
  generationPromptTokens,
  messageTokens,
} from "../engine/chat-template.ts";
import { decode } from "../engine/tokenizer.ts";
import { conversationOptionsFor, createConversation } from "../workload/conversation.ts";
import type { ProgramPlan, Workload } from "../workload/types.ts";

/**
 * A program's conversation as token ids, kept incrementally: each step appends only the
 * messages it adds (the previous answer and the new observation) instead of re-tokenising the
 * whole history. The messages are the workload's own (src/workload/conversation.ts, the same
 * ones `maitred bench` sends), so the ids equal `chatPromptTokens(messages, {addGenerationPrompt})`
 * of the full list at every step; test/simulate/program-tokens.test.ts checks that.
 *
 * The conversation always ends with the generation prompt `<|im_start|>assistant\n`, which is
 * how the next assistant message starts (chat-template.ts), so appending an answer keeps
 * everything before it: prompt(k) + answer is a prefix of prompt(k + 1), as with a real agent.
 *
 * The bench sends the generated text back as the assistant turn when it has the planned size
 * (conversation.ts `messagesFor`); so does this. Generated ids are word pieces, which
 * re-encode to the very same ids (src/engine/word-list.ts), so they are appended as they are
 * rather than decoded and encoded again.
 */

export interface StepPrompt {
  /**
   * The conversation's ids. Not copied (profiled: the copy per step was a tenth of the run):
   * it is the same array every step and grows when the next step is built, which is safe
   * because a program has one request at a time and builds step i + 1 only after step i
   * ended (the engine holds a prompt only while its request lives).
   */
  tokens: number[];
  /** Characters of each message, what the proxy hands the core (its dialect's `messageChars`). */
  messageChars: number[];
}

export interface ProgramTokens {
  /** The prompt of step `i`; steps are asked for in order (a retry may ask again). */
  prompt(i: number): StepPrompt;
  /** What step `i` generated, sent back as the next assistant turn (as the bench does). */
  recordOutput(i: number, outputIds: readonly number[]): void;
}

const GENERATION_PROMPT = generationPromptTokens();
const ASSISTANT_PREFIX = GENERATION_PROMPT;
const ASSISTANT_SUFFIX = messageTokens({ role: "assistant", content: "" }).slice(
  ASSISTANT_PREFIX.length,
);

function contentChars(m: ChatMessage): number {
  return typeof m.content === "string" ? m.content.length : 0;
}

export function createProgramTokens(plan: ProgramPlan, workload: Workload): ProgramTokens {
  const conversation = createConversation(plan, conversationOptionsFor(workload, plan));
  // messagesFor checks the size of every text it is given; older turns are already in `ids`,
  // so only the previous step's text is passed (each step stays O(its new tokens)).
  const texts: (string | undefined)[] = [];
  let lastText: string | undefined;
  let lastStep = -1;
  let lastOutput: readonly number[] = [];
  const ids: number[] = [];
  const chars: number[] = [];
  /** The step `ids` holds; a retried step reuses it as it is. */
  let built = -1;

  const append = (m: ChatMessage) => {
    for (const id of messageTokens(m)) ids.push(id);
    chars.push(contentChars(m));
  };

  const appendAnswer = (m: ChatMessage) => {
    if (lastText === undefined || m.content !== lastText) {
      append(m); // a synthetic stand-in of the planned size
      return;
    }
    for (const id of ASSISTANT_PREFIX) ids.push(id);
    for (const id of lastOutput) ids.push(id);
    for (const id of ASSISTANT_SUFFIX) ids.push(id);
    chars.push(lastText.length);
  };

  return {
    prompt(i) {
      if (i === built) return { tokens: ids, messageChars: chars };
      if (i !== built + 1) throw new RangeError(`step ${i} asked for after step ${built}`);
      if (lastStep !== i - 1) lastText = undefined;
      if (i > 0) texts[i - 1] = lastText;
      const messages = conversation.messagesFor(i, texts);
      if (i > 0) texts[i - 1] = undefined;
      if (conversation.layout[i].fresh) {
        ids.length = 0;
        chars.length = 0;
        for (const m of messages) append(m);
      } else {
        // Layout case 3: [assistant answer, observation] appended. The answer starts with the
        // generation prompt that ends `ids`, so it takes its place.
        ids.length -= GENERATION_PROMPT.length;
        appendAnswer(messages[messages.length - 2]);
        append(messages[messages.length - 1]);
      }
      for (const id of GENERATION_PROMPT) ids.push(id);
      built = i;
      return { tokens: ids, messageChars: chars };
    },
    recordOutput(i, outputIds) {
      lastStep = i;
      lastOutput = outputIds;
      lastText = decode(outputIds);
    },
  };
}
