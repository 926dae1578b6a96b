/**
 * Everything between an HTTP request and an engine request: injected failures, body checks,
 * model name, tokenisation, context-length checks (vLLM's messages) and the
 * response id (`X-Request-Id` → `chatcmpl-<id>`).
 */

import { chatPromptTokens } from "../engine/chat-template.ts";
import { encode, SPECIAL_TOKENS, VOCAB_SIZE } from "../engine/tokenizer.ts";
import { Errors } from "../errors.ts";
import type { FailureInjector } from "./failure-injection.ts";
import type { Endpoint, ResponseMeta } from "./openai-shapes.ts";
import type { SimBackendOptions } from "./options.ts";
import { parseChatBody, parseCompletionBody, parseJsonObject } from "./request-parse.ts";

/** vLLM's default `max_tokens` for `/v1/completions`. */
const COMPLETIONS_DEFAULT_MAX_TOKENS = 16;
/** Ids the tokenizer can produce: the vocabulary plus the special tokens after it. */
const ID_LIMIT = VOCAB_SIZE + SPECIAL_TOKENS.length;

export interface GenerationSpec {
  meta: ResponseMeta;
  engineId: string;
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
  endpoint: Endpoint,
  deps: PrepareDeps,
): Promise<GenerationSpec> {
  const { options } = deps;
  const plan = deps.failures.plan(req.headers);
  if (plan.status !== null) throw Errors.injected(plan.status);

  const json = parseJsonObject(await req.text());
  const body = endpoint === "chat" ? parseChatBody(json) : parseCompletionBody(json);
  if (body.model !== null && body.model !== options.model) throw Errors.modelNotFound(body.model);

  let promptTokens: number[];
  if (body.kind === "chat") {
    promptTokens = chatPromptTokens(body.messages, {
      addGenerationPrompt: body.addGenerationPrompt,
    });
  } else if (typeof body.prompt === "string") {
    promptTokens = encode(body.prompt);
  } else {
    const bad = body.prompt.find((id) => id >= ID_LIMIT);
    if (bad !== undefined)
      throw Errors.badRequest(`Token id ${bad} is out of vocabulary`, "prompt");
    promptTokens = body.prompt;
  }
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

  const requestId = req.headers.get("x-request-id") || deps.newRequestId();
  const id = `${endpoint === "chat" ? "chatcmpl" : "cmpl"}-${requestId}`;
  return {
    meta: { endpoint, id, created: Math.floor(deps.wallNow() / 1000), model: options.model },
    engineId: `${id}@${deps.nextSeq()}`,
    requestId,
    promptTokens,
    maxTokens,
    minTokens: body.minTokens,
    ignoreEos: body.ignoreEos,
    stream: body.stream,
    includeUsage: body.includeUsage,
    continuousUsageStats: body.continuousUsageStats,
    streamErrorAfter: plan.streamErrorAfter,
  };
}
