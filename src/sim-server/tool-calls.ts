/**
 * Whether one choice of a chat request answers with a tool call, which function it calls and
 * the exact tokens of its arguments: all drawn from the choice's key (the engine's sample
 * fingerprint), so the streamed and the plain answer to the same request agree.
 *
 * A named `tool_choice` calls that function, `required` one of the tools, `auto` one of them
 * for a `--tool-call-share` of choices (text otherwise). The engine then generates exactly
 * the tokens of the arguments text, as vLLM's structured output makes a model do, so usage and
 * timing count the arguments; the function name costs no tokens, a simplification (a
 * model's tool-call template spends a few on it).
 */

import { combine32, unitInterval } from "../engine/hash.ts";
import { encode, tokenTexts } from "../engine/tokenizer.ts";
import { toolArguments } from "./tool-arguments.ts";
import type { ToolsRequest } from "./tool-parse.ts";

/** How the call was asked for; it decides the finish reason and the plain answer's content. */
export type ToolCallMode = "auto" | "required" | "named";

export interface ToolCallPlan {
  mode: ToolCallMode;
  name: string;
  /** The arguments text token by token: what each engine step streams. */
  pieces: string[];
  /** Token ids of the arguments, the engine request's forced output. */
  tokenIds: number[];
}

// Salts so the decision, the function and the arguments draw independently from one key.
const SHARE_SALT = 0x7c3a_9e11;
const PICK_SALT = 0x2b5d_41f3;
const ARGS_SALT = 0x51ed_270b;

export function planToolCall(
  request: ToolsRequest,
  key: number,
  autoShare: number,
): ToolCallPlan | null {
  const { tools, choice } = request;
  let mode: ToolCallMode;
  let tool = tools[combine32(key, PICK_SALT) % tools.length];
  if (typeof choice === "object") {
    mode = "named";
    tool = tools.find((t) => t.name === choice.name) ?? tool;
  } else {
    mode = choice;
    if (choice === "auto" && !(unitInterval(combine32(key, SHARE_SALT)) < autoShare)) return null;
  }
  const text = toolArguments(tool.parameters, combine32(key, ARGS_SALT));
  return { mode, name: tool.name, pieces: tokenTexts(text), tokenIds: encode(text) };
}
