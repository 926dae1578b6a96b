/**
 * Everything between an HTTP request and its engine requests: injected failures, body checks,
 * model name, tokenisation, context-length checks (vLLM's messages), the response id
 * (`X-Request-Id` → `chatcmpl-<id>`) and one plan per choice.
 *
 * A request with `n` choices becomes `n` engine requests on the same prompt, as vLLM fans it
 * out (the prefix cache makes the copies cheap once the first has computed the prompt). Each
 * choice has its own key, the engine's fingerprint of its sample: it seeds the choice's
 * tokens, its tool call and its logprobs, and choice 0's key is the key of the request alone.
 */

import { chatPromptTokens } from "../engine/chat-template.ts";
import { fingerprint } from "../engine/hash.ts";
import { sampleFingerprint } from "../engine/output-sampler.ts";
import { encode, SPECIAL_TOKENS, VOCAB_SIZE } from "../engine/tokenizer.ts";
import { Errors } from "../errors.ts";
import type { ChoicesDialect } from "./answer-fields.ts";
import type { FailureInjector } from "./failure-injection.ts";
import type { ResponseMeta } from "./openai-shapes.ts";
import type { SimBackendOptions } from "./options.ts";
import {
  type ChatBody,
  type CompletionBody,
  parseChatBody,
  parseCompletionBody,
  parseJsonObject,
} from "./request-parse.ts";
import { planToolCall, type ToolCallPlan } from "./tool-calls.ts";

/** vLLM's default `max_tokens` for `/v1/completions`. */
const COMPLETIONS_DEFAULT_MAX_TOKENS = 16;
/** Ids the tokenizer can produce: the vocabulary plus the special tokens after it. */
const ID_LIMIT = VOCAB_SIZE + SPECIAL_TOKENS.length;

export interface ChoicePlan {
  index: number;
  engineId: string;
  /** Seeds the choice's tokens (the engine's sample fingerprint), tool call and logprobs. */
  key: number;
  /** The call this choice answers with; null = text. */
  toolCall: ToolCallPlan | null;
  /**
   * A text answer cut by `max_tokens` ends as `stop`, as a model that emitted its end of
   * sequence right there (header `x-sim-finish: stop`): a driver that fixes each answer's
   * length can still send final answers.
   */
  lengthIsStop: boolean;
}

/** Request header: `stop` makes an answer cut at `max_tokens` end as `stop` (ChoicePlan). */
export const FINISH_HEADER = "x-sim-finish";

export interface GenerationSpec {
  meta: ResponseMeta;
  /** Echoed as the `x-request-id` response header. */
  requestId: string;
  promptTokens: number[];
  maxTokens: number;
  minTokens: number;
  ignoreEos: boolean;
  stream: boolean;
  includeUsage: boolean;
  continuousUsageStats: boolean;
  streamErrorAfter: number | null;
  /** One per choice, in index order. */
  choices: ChoicePlan[];
  /** Top logprobs per token; null = no logprobs. */
  logprobs: number | null;
  /** The request's `priority` field for an engine that schedules by it; null = absent or FCFS. */
  priority: number | null;
}

export interface PrepareDeps {
  options: SimBackendOptions;
  failures: FailureInjector;
  /** Wall clock (ms) for the `created` field. */
  wallNow: () => number;
  newRequestId: () => string;
  /** Engine request ids must be unique even when clients reuse an X-Request-Id. */
  nextSeq: () => number;
}

export async function prepareGeneration(
  req: Request,
  endpoint: ChoicesDialect,
  deps: PrepareDeps,
): Promise<GenerationSpec> {
  const plan = deps.failures.plan(req.headers);
  if (plan.status !== null) throw Errors.injected(plan.status);
  return prepareParsed(parseJsonObject(await req.text()), req.headers, endpoint, deps, plan);
}

/**
 * The same for a body already read: the Messages and Responses routes turn theirs into a chat
 * body first, as vLLM serves both APIs through its chat completions path.
 */
export function prepareParsed(
  json: Record<string, unknown>,
  headers: Headers,
  endpoint: ChoicesDialect,
  deps: PrepareDeps,
  plan = deps.failures.plan(headers),
): GenerationSpec {
  const { options } = deps;
  if (plan.status !== null) throw Errors.injected(plan.status);
  const body = endpoint === "chat" ? parseChatBody(json) : parseCompletionBody(json);
  if (body.model !== null && body.model !== options.model) throw Errors.modelNotFound(body.model);

  const promptTokens = promptTokensOf(body);
  const p = promptTokens.length;
  if (p === 0) throw Errors.badRequest("The decoder prompt cannot be empty", "prompt");
  const maxLen = options.maxModelLen;
  if (p >= maxLen) {
    throw Errors.contextLength(
      `This model's maximum context length is ${maxLen} tokens. However, your request has ${p} input tokens. Please reduce the length of the input messages.`,
    );
  }
  const defaultMax = endpoint === "chat" ? maxLen - p : COMPLETIONS_DEFAULT_MAX_TOKENS;
  const maxTokens = body.maxTokens ?? defaultMax;
  if (p + maxTokens > maxLen) {
    throw Errors.contextLength(
      `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length is ${maxLen} tokens and your request has ${p} input tokens (${maxTokens} > ${maxLen} - ${p}).`,
    );
  }

  const requestId = headers.get("x-request-id") || deps.newRequestId();
  const id = `${endpoint === "chat" ? "chatcmpl" : "cmpl"}-${requestId}`;
  const requestKey = fingerprint(options.seed, promptTokens);
  const lengthIsStop = headers.get(FINISH_HEADER)?.trim().toLowerCase() === "stop";
  const choices = Array.from({ length: body.n }, (_, index): ChoicePlan => {
    const key = sampleFingerprint(requestKey, index);
    const tools = body.kind === "chat" ? body.tools : null;
    return {
      index,
      engineId: `${id}@${deps.nextSeq()}`,
      key,
      toolCall: tools === null ? null : planToolCall(tools, key, options.toolCallShare),
      lengthIsStop,
    };
  });
  return {
    meta: { endpoint, id, created: Math.floor(deps.wallNow() / 1000), model: options.model },
    requestId,
    promptTokens,
    maxTokens,
    minTokens: body.minTokens,
    ignoreEos: body.ignoreEos,
    stream: body.stream,
    includeUsage: body.includeUsage,
    continuousUsageStats: body.continuousUsageStats,
    streamErrorAfter: plan.streamErrorAfter,
    choices,
    logprobs: body.logprobs,
    // A first come, first served engine never sees the field.
    priority: options.schedulingPolicy === "priority" ? body.priority : null,
  };
}

function promptTokensOf(body: ChatBody | CompletionBody): number[] {
  if (body.kind === "chat") {
    return chatPromptTokens(body.messages, { addGenerationPrompt: body.addGenerationPrompt });
  }
  if (typeof body.prompt === "string") return encode(body.prompt);
  const bad = body.prompt.find((id) => id >= ID_LIMIT);
  if (bad !== undefined) throw Errors.badRequest(`Token id ${bad} is out of vocabulary`, "prompt");
  return body.prompt;
}
