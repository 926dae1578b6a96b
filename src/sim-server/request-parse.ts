/**
 * Request bodies of `/v1/chat/completions` and `/v1/completions`, checked the way vLLM's
 * pydantic models check them: known fields with a wrong type or value
 * are a 400, unknown fields (e.g. a router's `program_id`) are accepted and ignored.
 */

import type { ChatMessage } from "../engine/chat-template.ts";
import { Errors } from "../errors.ts";
import { parseTools, type ToolsRequest } from "./tool-parse.ts";

/**
 * vLLM sets no ceiling on `n`; the simulated backend does, so one request cannot queue
 * thousands of engine requests.
 */
export const MAX_N = 128;
/** vLLM's `--max-logprobs` default: the most top logprobs a request may ask for. */
export const MAX_LOGPROBS = 20;

export interface GenerationParams {
  model: string | null;
  stream: boolean;
  includeUsage: boolean;
  continuousUsageStats: boolean;
  /** Absent = the endpoint's default (chat: rest of the context, completions: 16). */
  maxTokens: number | null;
  minTokens: number;
  ignoreEos: boolean;
  /** Choices to sample (`n`). */
  n: number;
  /** Top logprobs per token (chat `top_logprobs`, completions `logprobs`); null = none. */
  logprobs: number | null;
  /** The `priority` field (an integer; a priority-scheduling engine reads it); null = absent. */
  priority: number | null;
}

export interface ChatBody extends GenerationParams {
  kind: "chat";
  messages: ChatMessage[];
  addGenerationPrompt: boolean;
  /** The tool calls the request allows; null = text only. */
  tools: ToolsRequest | null;
}

export interface CompletionBody extends GenerationParams {
  kind: "completion";
  /** Text, or token ids when the client sent them. */
  prompt: string | number[];
}

type Obj = Record<string, unknown>;
type Check = (v: unknown) => boolean;

const isInt: Check = (v) => typeof v === "number" && Number.isInteger(v);
const isNum: Check = (v) => typeof v === "number" && Number.isFinite(v);
const isBool: Check = (v) => typeof v === "boolean";
const isStr: Check = (v) => typeof v === "string";
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isStop: Check = (v) => isStr(v) || (Array.isArray(v) && v.every(isStr));
const isTokenIds = (v: unknown): v is number[] =>
  Array.isArray(v) && v.every((t) => isInt(t) && (t as number) >= 0);

/** Types of the known sampling fields we accept but do not model (null is always allowed). */
const COMMON_FIELD_TYPES: Record<string, [Check, string]> = {
  model: [isStr, "a string"],
  stream: [isBool, "a boolean"],
  max_tokens: [isInt, "an integer"],
  min_tokens: [isInt, "an integer"],
  n: [isInt, "an integer"],
  ignore_eos: [isBool, "a boolean"],
  temperature: [isNum, "a number"],
  top_p: [isNum, "a number"],
  top_k: [isInt, "an integer"],
  min_p: [isNum, "a number"],
  presence_penalty: [isNum, "a number"],
  frequency_penalty: [isNum, "a number"],
  repetition_penalty: [isNum, "a number"],
  seed: [isInt, "an integer"],
  stop: [isStop, "a string or a list of strings"],
  stop_token_ids: [isTokenIds, "a list of token ids"],
  user: [isStr, "a string"],
  priority: [isInt, "an integer"],
};

const CHAT_FIELD_TYPES: Record<string, [Check, string]> = {
  ...COMMON_FIELD_TYPES,
  max_completion_tokens: [isInt, "an integer"],
  logprobs: [isBool, "a boolean"],
  top_logprobs: [isInt, "an integer"],
  add_generation_prompt: [isBool, "a boolean"],
  parallel_tool_calls: [isBool, "a boolean"],
};

const COMPLETION_FIELD_TYPES: Record<string, [Check, string]> = {
  ...COMMON_FIELD_TYPES,
  logprobs: [isInt, "an integer"],
  echo: [isBool, "a boolean"],
  suffix: [isStr, "a string"],
};

/** Parse a body as JSON; anything but an object is a 400 (vLLM answers pydantic errors so). */
export function parseJsonObject(text: string): Obj {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw Errors.invalidJson(err instanceof Error ? err.message : String(err));
  }
  if (!isObj(value)) throw Errors.badRequest("Request body must be a JSON object.");
  return value;
}

function checkTypes(body: Obj, types: Record<string, [Check, string]>): void {
  for (const [field, [check, what]] of Object.entries(types)) {
    const v = body[field];
    if (v !== undefined && v !== null && !check(v)) {
      throw Errors.badRequest(`Field \`${field}\` must be ${what}.`, field);
    }
  }
}

/**
 * `stream_options` as vLLM reads it: `include_usage` defaults to true once the object is sent
 * (an explicit null turns it off), and `continuous_usage_stats` counts only with it.
 */
function streamOptions(body: Obj, stream: boolean) {
  const so = body.stream_options;
  if (so === undefined || so === null) return { includeUsage: false, continuousUsageStats: false };
  if (!isObj(so))
    throw Errors.badRequest("Field `stream_options` must be an object.", "stream_options");
  // Verbatim vLLM validator message.
  if (!stream) {
    throw Errors.badRequest(
      "Stream options can only be defined when `stream=True`.",
      "stream_options",
    );
  }
  for (const key of ["include_usage", "continuous_usage_stats"]) {
    if (so[key] !== undefined && so[key] !== null && !isBool(so[key])) {
      throw Errors.badRequest(
        `Field \`stream_options.${key}\` must be a boolean.`,
        "stream_options",
      );
    }
  }
  const includeUsage = so.include_usage === undefined || so.include_usage === true;
  return { includeUsage, continuousUsageStats: includeUsage && so.continuous_usage_stats === true };
}

function checkN(body: Obj): number {
  const n = (body.n as number | null | undefined) ?? 1;
  if (n < 1) throw Errors.badRequest(`n must be at least 1, got ${n}.`, "n");
  if (n > MAX_N) {
    throw Errors.badRequest(`n must be at most ${MAX_N} on the simulated backend, got ${n}.`, "n");
  }
  return n;
}

/** The engine-side ceiling vLLM applies to chat `top_logprobs` and completions `logprobs`. */
function checkLogprobsCeiling(top: number, field: string): number {
  if (top > MAX_LOGPROBS) {
    throw Errors.badRequest(
      `Requested sample logprobs of ${top}, which is greater than max allowed: ${MAX_LOGPROBS}`,
      field,
    );
  }
  return top;
}

/** Chat: `logprobs: true` turns them on, `top_logprobs` (default 0) says how many alternatives. */
function chatLogprobs(body: Obj): number | null {
  const top = body.top_logprobs as number | null | undefined;
  if (top !== undefined && top !== null) {
    if (top < 0)
      throw Errors.badRequest("`top_logprobs` must be a positive value.", "top_logprobs");
    if (top > 0 && body.logprobs !== true) {
      throw Errors.badRequest(
        "when using `top_logprobs`, `logprobs` must be set to true.",
        "top_logprobs",
      );
    }
  }
  // vLLM reports none when `top_logprobs` is an explicit null, even with `logprobs: true`.
  if (body.logprobs !== true || top === null) return null;
  return checkLogprobsCeiling(top ?? 0, "top_logprobs");
}

/** Completions: `logprobs: <int>` turns them on and says how many alternatives. */
function completionLogprobs(body: Obj): number | null {
  const top = body.logprobs as number | null | undefined;
  if (top === undefined || top === null) return null;
  if (top < 0) throw Errors.badRequest("`logprobs` must be a positive value.", "logprobs");
  return checkLogprobsCeiling(top, "logprobs");
}

function generationParams(
  body: Obj,
  maxTokensField: unknown,
  logprobs: number | null,
): GenerationParams {
  const stream = body.stream === true;
  const usage = streamOptions(body, stream);
  const n = checkN(body);
  const maxTokens = (maxTokensField as number | null | undefined) ?? null;
  if (maxTokens !== null && maxTokens < 1) {
    throw Errors.badRequest(`max_tokens must be at least 1, got ${maxTokens}.`, "max_tokens");
  }
  const minTokens = (body.min_tokens as number | null | undefined) ?? 0;
  if (minTokens < 0) {
    throw Errors.badRequest(
      `min_tokens must be greater than or equal to 0, got ${minTokens}.`,
      "min_tokens",
    );
  }
  if (maxTokens !== null && minTokens > maxTokens) {
    throw Errors.badRequest(
      `min_tokens must be less than or equal to max_tokens=${maxTokens}, got ${minTokens}.`,
      "min_tokens",
    );
  }
  return {
    model: (body.model as string | null | undefined) ?? null,
    stream,
    ...usage,
    maxTokens,
    minTokens,
    ignoreEos: body.ignore_eos === true,
    n,
    logprobs,
    priority: (body.priority as number | null | undefined) ?? null,
  };
}

function checkMessage(m: unknown, i: number): ChatMessage {
  const bad = (what: string) => Errors.badRequest(`messages[${i}]${what}`, "messages");
  if (!isObj(m) || typeof m.role !== "string")
    throw bad(" must be an object with a string `role`.");
  const c = m.content;
  if (c !== undefined && c !== null && !isStr(c)) {
    if (!Array.isArray(c)) throw bad(".content must be a string or a list of parts.");
    for (const part of c) {
      if (!isObj(part) || part.type !== "text" || !isStr(part.text)) {
        throw bad(".content: only text parts are supported.");
      }
    }
  }
  if (m.tool_calls !== undefined && m.tool_calls !== null) {
    const ok =
      Array.isArray(m.tool_calls) &&
      m.tool_calls.every(
        (t) =>
          isObj(t) && isObj(t.function) && isStr(t.function.name) && isStr(t.function.arguments),
      );
    if (!ok) throw bad(".tool_calls must be a list of {function: {name, arguments}}.");
  }
  return m as unknown as ChatMessage;
}

export function parseChatBody(body: Obj): ChatBody {
  checkTypes(body, CHAT_FIELD_TYPES);
  const raw = body.messages;
  if (!Array.isArray(raw) || raw.length === 0) {
    throw Errors.badRequest("Field `messages` must be a non-empty list.", "messages");
  }
  const messages = raw.map(checkMessage);
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  return {
    kind: "chat",
    messages,
    addGenerationPrompt: body.add_generation_prompt !== false,
    tools: parseTools(body),
    ...generationParams(body, maxTokens, chatLogprobs(body)),
  };
}

export function parseCompletionBody(body: Obj): CompletionBody {
  checkTypes(body, COMPLETION_FIELD_TYPES);
  let prompt = body.prompt;
  // A one-element batch is the same as a single prompt; larger batches are not modelled.
  if (
    Array.isArray(prompt) &&
    prompt.length === 1 &&
    (isStr(prompt[0]) || Array.isArray(prompt[0]))
  ) {
    prompt = prompt[0];
  }
  if (!isStr(prompt) && !(isTokenIds(prompt) && prompt.length > 0)) {
    const batched = Array.isArray(prompt) && prompt.length > 1 && !prompt.every(isInt);
    throw Errors.badRequest(
      batched
        ? "The simulated backend supports one prompt per request."
        : "Field `prompt` must be a string or a non-empty list of token ids.",
      "prompt",
    );
  }
  return {
    kind: "completion",
    prompt: prompt as string | number[],
    ...generationParams(body, body.max_tokens, completionLogprobs(body)),
  };
}
