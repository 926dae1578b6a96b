/**
 * A fixed ChatML-like chat template ("render messages to
 * one string with fixed role markers so shared conversation prefixes share tokens").
 *
 * One message renders as
 *
 *     <|im_start|>{role}\n{body}<|im_end|>\n
 *
 * where `<|im_start|>{role}` and `<|im_end|>` are single special tokens, so every message costs
 * exactly OVERHEAD_PER_MESSAGE = 4 tokens (header, "\n", end marker, "\n") plus its body.
 * `addGenerationPrompt` appends `<|im_start|>assistant\n`: GENERATION_PROMPT_OVERHEAD = 2.
 *
 *     tokens(prompt) = Σ (OVERHEAD_PER_MESSAGE + countTokens(messageBody(m)))
 *                      + (addGenerationPrompt ? GENERATION_PROMPT_OVERHEAD : 0)
 *
 * and for plain string content `messageBody(m) === m.content`, so a generator builds a prompt
 * of an exact size with `textOfTokens`. The generation prompt is the first two tokens of the
 * assistant message that answers it, so prompt(turn k) + generated tokens is a prefix of
 * prompt(turn k+1): an agent's growing conversation keeps hitting its own prefix cache.
 *
 * Body: text content (string, or the `text` parts of an array concatenated), then for an
 * assistant's tool calls one `<tool_call>\n{"name":…,"arguments":…}\n</tool_call>` each, joined
 * by "\n". Roles: system, developer (rendered as system), user, assistant, tool, function
 * (rendered as tool). Other roles are a 400.
 */

import { Errors } from "../errors.ts";
import { encode, specialTokenId } from "./tokenizer.ts";

export interface ChatContentPart {
  type: string;
  text?: string;
}

export interface ChatToolCall {
  id?: string;
  type?: string;
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: string;
  content?: string | readonly ChatContentPart[] | null;
  tool_calls?: readonly ChatToolCall[];
  tool_call_id?: string;
  name?: string;
}

export interface ChatTemplateOptions {
  addGenerationPrompt?: boolean;
}

export const OVERHEAD_PER_MESSAGE = 4;
export const GENERATION_PROMPT_OVERHEAD = 2;

const IM_END = "<|im_end|>";
const NEWLINE = "\n";

const HEADER_BY_ROLE: Record<string, string> = {
  system: "<|im_start|>system",
  developer: "<|im_start|>system",
  user: "<|im_start|>user",
  assistant: "<|im_start|>assistant",
  tool: "<|im_start|>tool",
  function: "<|im_start|>tool",
};

const IM_END_ID = specialTokenId(IM_END);
const NEWLINE_ID = encode(NEWLINE)[0];
const HEADER_ID_BY_ROLE: Record<string, number> = Object.fromEntries(
  Object.entries(HEADER_BY_ROLE).map(([role, header]) => [role, specialTokenId(header)]),
);

function header(role: string): string {
  const h = Object.hasOwn(HEADER_BY_ROLE, role) ? HEADER_BY_ROLE[role] : undefined;
  if (h === undefined) {
    throw Errors.badRequest(
      `Unsupported message role '${role}'; expected one of ${Object.keys(HEADER_BY_ROLE).join(", ")}.`,
      "messages",
    );
  }
  return h;
}

function contentText(content: ChatMessage["content"]): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  let text = "";
  for (const part of content) if (part.type === "text" && part.text) text += part.text;
  return text;
}

function renderToolCall(call: ChatToolCall): string {
  const payload = JSON.stringify({ name: call.function.name, arguments: call.function.arguments });
  return `<tool_call>\n${payload}\n</tool_call>`;
}

/** The text between a message's header line and its end marker. */
export function messageBody(message: ChatMessage): string {
  const text = contentText(message.content);
  if (!message.tool_calls || message.tool_calls.length === 0) return text;
  const parts = text === "" ? [] : [text];
  for (const call of message.tool_calls) parts.push(renderToolCall(call));
  return parts.join(NEWLINE);
}

export function renderMessage(message: ChatMessage): string {
  return `${header(message.role)}${NEWLINE}${messageBody(message)}${IM_END}${NEWLINE}`;
}

/** The prompt as text; encode(renderChat(m, o)) equals chatPromptTokens(m, o). */
export function renderChat(
  messages: readonly ChatMessage[],
  options: ChatTemplateOptions = {},
): string {
  let text = "";
  for (const m of messages) text += renderMessage(m);
  if (options.addGenerationPrompt) text += `${HEADER_BY_ROLE.assistant}${NEWLINE}`;
  return text;
}

/** Token ids of one rendered message (OVERHEAD_PER_MESSAGE + body tokens). */
export function messageTokens(message: ChatMessage): number[] {
  header(message.role);
  const ids = [HEADER_ID_BY_ROLE[message.role], NEWLINE_ID];
  for (const id of encode(messageBody(message))) ids.push(id);
  ids.push(IM_END_ID, NEWLINE_ID);
  return ids;
}

/** The generation prompt's ids: `<|im_start|>assistant`, "\n". */
export function generationPromptTokens(): number[] {
  return [HEADER_ID_BY_ROLE.assistant, NEWLINE_ID];
}

export function chatPromptTokens(
  messages: readonly ChatMessage[],
  options: ChatTemplateOptions = {},
): number[] {
  const ids: number[] = [];
  for (const m of messages) for (const id of messageTokens(m)) ids.push(id);
  if (options.addGenerationPrompt) ids.push(...generationPromptTokens());
  return ids;
}
