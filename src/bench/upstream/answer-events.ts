/**
 * What the vLLM-like upstream writes, with the simulated backend's writers (src/sim-server:
 * openai-shapes.ts, messages-events.ts, responses-events.ts) given the fields of the vLLM it
 * imitates (UPSTREAM_FIELDS):
 *
 *   - a streamed answer is one SSE event per token, each built when it is written. Chat: the
 *     role event, one event per token, the last with its `finish_reason`, then (when
 *     `stream_options.include_usage` is asked, as maitred always asks) a usage event with no
 *     choices, then `data: [DONE]`. Messages and Responses: the events vLLM writes before and
 *     after the tokens in those APIs, one `content_block_delta` or `response.output_text.delta`
 *     per token;
 *   - the events have every field vLLM puts in them, in its order: a chat chunk lists the
 *     fields vLLM sets, nulls included (`logprobs`, `finish_reason`, `token_ids`, and
 *     `stop_reason` beside a finish reason), and no `system_fingerprint`, which vLLM's chunks do
 *     not carry; the usage event lists no nulls;
 *   - a plain answer is one JSON body with every field of vLLM's plain answer, nulls included.
 *
 * Token texts come from a short list escaped once, so a token's event costs the joining of a
 * few strings the writers built once per answer.
 */
import type { AnswerFields } from "../../sim-server/answer-fields.ts";
import { createMessagesEvents, textContentJson } from "../../sim-server/messages-events.ts";
import {
  type ChunkWriter,
  completionResponseJson,
  createChunkWriter,
  SSE_DONE,
  type UsageCounts,
} from "../../sim-server/openai-shapes.ts";
import { createResponsesEvents } from "../../sim-server/responses-events.ts";
import type { ChatRequest } from "./upstream-request.ts";

/**
 * The fields of the vLLM the upstream imitates: chat's `token_ids` fields and `reasoning`, as
 * releases later than the simulated backend's write them, and Messages and Responses answers
 * without the fields the simulated backend adds (`stop_sequence`, the response's status fields,
 * its text parts' `logprobs`, the plain answer's token details).
 */
export const UPSTREAM_FIELDS: AnswerFields = {
  tokenIds: true,
  reasoningField: "reasoning",
  stopSequence: false,
  responseDetails: false,
};

/** A few short tokens, JSON-escaped once: the text of token `i` is `TOKENS[i % n]`. */
const TOKEN_TEXTS = [" the", " file", " reads", ",", " and", " then", " calls", " grep", "."];
const TOKENS = TOKEN_TEXTS.map((t) => JSON.stringify(t));
const token = (i: number) => TOKENS[i % TOKENS.length];

/** The text of an answer of `n` tokens (what a rebuilt plain answer must say). */
export function answerText(n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) s += TOKEN_TEXTS[i % TOKEN_TEXTS.length];
  return s;
}

const usageOf = (req: ChatRequest): UsageCounts => ({
  promptTokens: req.promptTokens,
  completionTokens: req.tokens,
  cachedTokens: null,
});

/** The SSE events of one streamed answer, built lazily one at a time. */
export interface AnswerEvents {
  readonly total: number;
  /** Events before the first token's (written with it, at the first step). */
  readonly lead: number;
  event(k: number): string;
}

/**
 * A chat stream: event 0 is the role event, events 1..n the tokens (the last with its finish
 * reason), then usage if asked, then `[DONE]`.
 */
export class StreamEvents implements AnswerEvents {
  readonly total: number;
  readonly lead = 1;
  private readonly writer: ChunkWriter;
  private readonly req: ChatRequest;

  constructor(id: string, created: number, model: string, req: ChatRequest) {
    this.req = req;
    this.writer = createChunkWriter({ endpoint: "chat", id, created, model }, UPSTREAM_FIELDS);
    this.total = req.tokens + (req.includeUsage ? 3 : 2);
  }

  event(k: number): string {
    const n = this.req.tokens;
    if (k === 0) return this.writer.role(null);
    if (k < n) return this.writer.deltaJson(token(k - 1), null, null);
    if (k === n) return this.writer.deltaJson(token(k - 1), "length", null);
    if (k === n + 1 && this.req.includeUsage) return this.writer.usage(usageOf(this.req));
    return SSE_DONE;
  }
}

/**
 * A Messages stream: `message_start`, `content_block_start`, one `content_block_delta` per
 * token, `content_block_stop`, `message_delta` (stop reason and usage), `message_stop`.
 */
function messagesEvents(id: string, model: string, req: ChatRequest): AnswerEvents {
  const n = req.tokens;
  const events = createMessagesEvents(
    { id, model, inputTokens: req.promptTokens, tool: null },
    UPSTREAM_FIELDS,
  );
  return {
    total: n + 5,
    lead: 2,
    event(k) {
      if (k === 0) return events.messageStart();
      if (k === 1) return events.blockStart();
      if (k < n + 2) return events.blockDelta(token(k - 2));
      if (k === n + 2) return events.blockStop();
      if (k === n + 3) return events.messageDelta(usageOf(req), "length");
      return events.messageStop();
    },
  };
}

const responsesMeta = (id: string, created: number, model: string) => ({
  responseId: `resp_${id}`,
  itemId: `msg_${id}`,
  created,
  model,
  echo: {},
  call: null,
});

/**
 * A Responses stream: `response.created`, `response.in_progress`, `response.output_item.added`,
 * `response.content_part.added`, one `response.output_text.delta` per token, then
 * `response.output_text.done`, `response.content_part.done`, `response.output_item.done`
 * (each with the whole text) and `response.completed` (the whole response with its usage).
 */
function responsesEvents(id: string, created: number, model: string, req: ChatRequest) {
  const n = req.tokens;
  const events = createResponsesEvents(responsesMeta(id, created, model), UPSTREAM_FIELDS);
  let whole: string | null = null;
  const text = () => {
    whole ??= JSON.stringify(answerText(n));
    return whole;
  };
  return {
    total: n + 8,
    lead: 4,
    event(k: number): string {
      if (k === 0) return events.started("response.created", k);
      if (k === 1) return events.started("response.in_progress", k);
      if (k === 2) return events.itemAdded(k);
      if (k === 3) return events.partAdded(k);
      if (k < n + 4) return events.delta(k, token(k - 4));
      if (k === n + 4) return events.textDone(k, text());
      if (k === n + 5) return events.partDone(k, text());
      if (k === n + 6) return events.itemDone(k, text());
      return events.completed(k, events.response(text(), usageOf(req), "length"));
    },
  };
}

/** The events of one streamed answer in the request's API. */
export function answerEvents(
  id: string,
  created: number,
  model: string,
  req: ChatRequest,
): AnswerEvents {
  if (req.api === "messages") return messagesEvents(id, model, req);
  if (req.api === "responses") return responsesEvents(id, created, model, req);
  return new StreamEvents(id, created, model, req);
}

/** vLLM's plain answer (every field, nulls included, in its order), in the request's API. */
export function plainAnswer(id: string, created: number, model: string, req: ChatRequest): string {
  const text = answerText(req.tokens);
  const usage = usageOf(req);
  if (req.api === "messages") {
    const events = createMessagesEvents(
      { id, model, inputTokens: req.promptTokens, tool: null },
      UPSTREAM_FIELDS,
    );
    return events.body(textContentJson(text), usage, "length");
  }
  if (req.api === "responses") {
    const events = createResponsesEvents(responsesMeta(id, created, model), UPSTREAM_FIELDS);
    return events.response(JSON.stringify(text), usage, "length", true);
  }
  const meta = { endpoint: "chat" as const, id, created, model };
  return completionResponseJson(meta, text, "length", usage, UPSTREAM_FIELDS);
}
