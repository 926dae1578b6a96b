/**
 * What the answer writers (openai-shapes.ts, messages-writer.ts, responses-writer.ts) are told
 * besides the answer itself: the API they write, by the router's name for it, and which of
 * the fields that differ between vLLM releases they put in.
 *
 * Two vLLMs are imitated in this repository: the simulated backend writes the v0.11-era
 * release's answers (README.md in this folder), and the vLLM-like upstream the overhead
 * benchmarks put behind the router (src/bench/upstream) writes a later release's chat fields
 * and a leaner Messages and Responses answer. Both write with these same writers, so the
 * fields below are the whole of the difference between them.
 */
import type { DialectName } from "../proxy/dialects/dialect.ts";

// The router's name for an API is the one name: the simulated backend and the benchmarks
// (which may not import the proxy) take it from here.
export type { DialectName };

/** The OpenAI APIs whose answers are lists of choices: chat completions and completions. */
export type ChoicesDialect = Extract<DialectName, "chat" | "completions">;

export interface AnswerFields {
  /**
   * Chat: vLLM's `return_token_ids` fields, left null, as later releases write them:
   * `prompt_token_ids` on the first chunk and the plain answer, `token_ids` on every choice
   * of every later chunk and of the plain answer.
   */
  tokenIds: boolean;
  /** Chat: the name of the plain message's reasoning field, null in every answer. */
  reasoningField: "reasoning_content" | "reasoning";
  /** Messages: `stop_sequence: null` beside the stop reason (`message_delta`, plain answer). */
  stopSequence: boolean;
  /**
   * Responses: `background`, `error` and `incomplete_details` on the response, `logprobs: []`
   * on the text part an output item holds, and the token details in the plain answer's usage
   * (`response.completed` always has them).
   */
  responseDetails: boolean;
}

/** The v0.11-era vLLM the simulated backend imitates. */
export const SIM_BACKEND_FIELDS: AnswerFields = {
  tokenIds: false,
  reasoningField: "reasoning_content",
  stopSequence: true,
  responseDetails: true,
};
