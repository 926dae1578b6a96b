/**
 * The OpenAI Responses answer as vLLM writes it (its simple, non-harmony stream):
 * `response.created` and `response.in_progress` with the response `in_progress`, then one
 * output item — a `message` (`content_part.added`, `output_text.delta` per step,
 * `output_text.done`, `content_part.done`) or a `function_call` (`function_call_arguments.delta`
 * per step, `function_call_arguments.done`) — opened by `output_item.added` and closed by
 * `output_item.done`, then `response.completed` with the whole response and its usage
 * (`status: "incomplete"` when the length cut it). Every event has its `sequence_number`,
 * which the caller counts.
 *
 * This file writes each event and the plain body, for the simulated backend
 * (responses-writer.ts writes them from the engine's steps) and the vLLM-like upstream
 * (src/bench/upstream, one event per token) alike. Texts arrive as JSON strings (quoted and
 * escaped), so an event costs no serialising beyond what its caller did once.
 */
import type { MaitredError } from "../errors.ts";
import { type AnswerFields, SIM_BACKEND_FIELDS } from "./answer-fields.ts";
import type { TurnEnd } from "./dialect-answer.ts";
import { namedEvent, type UsageCounts } from "./openai-shapes.ts";

/** What a Responses answer's events say besides its tokens. */
export interface ResponsesMeta {
  /** The response's id (`resp_…`) and its output item's (`msg_…`, `fc_…`). */
  responseId: string;
  itemId: string;
  created: number;
  model: string;
  /**
   * The request's fields the response echoes (instructions, tools, …), in their order, after
   * its `output`; none for an empty object.
   */
  echo: Record<string, unknown>;
  /** The `function_call` item the answer is; null for a `message`. */
  call: { callId: string; name: string } | null;
}

/** The events of one Responses answer, each written whole (`event:` and `data:` lines). */
export interface ResponsesEvents {
  /** `response.created` or `response.in_progress`, the response still without output. */
  started(type: "response.created" | "response.in_progress", seq: number): string;
  itemAdded(seq: number): string;
  /** A message's empty text part (a function call has none). */
  partAdded(seq: number): string;
  /** One piece of the output, given as a JSON string: text, or a call's arguments. */
  delta(seq: number, pieceJson: string): string;
  /** A message's text, whole, once the last piece is out. */
  textDone(seq: number, textJson: string): string;
  /** A message's text part, closed with its whole text. */
  partDone(seq: number, textJson: string): string;
  /** A function call's arguments, whole, once the last piece is out. */
  argumentsDone(seq: number, argumentsJson: string): string;
  /** The output item, closed with its whole text (a message's) or arguments (a call's). */
  itemDone(seq: number, textJson: string): string;
  /** `response.completed`, holding the whole response (`response`'s). */
  completed(seq: number, responseJson: string): string;
  /** The error event that ends a stream that failed. */
  error(seq: number, error: MaitredError): string;
  /** The whole response, as `response.completed` holds it (`plain`: as the plain answer). */
  response(textJson: string, usage: UsageCounts, end: TurnEnd, plain?: boolean): string;
}

/** The JSON members an object's entries make, as `JSON.stringify` writes them. */
function members(obj: Record<string, unknown>): string {
  let out = "";
  for (const [k, v] of Object.entries(obj))
    if (v !== undefined) out += `,${JSON.stringify(k)}:${JSON.stringify(v)}`;
  return out;
}

export function createResponsesEvents(
  meta: ResponsesMeta,
  fields: AnswerFields = SIM_BACKEND_FIELDS,
): ResponsesEvents {
  const { call } = meta;
  const item = JSON.stringify(meta.itemId);
  const callName = JSON.stringify(call?.name ?? null);
  const details = fields.responseDetails;
  const head = `{"id":${JSON.stringify(meta.responseId)},"object":"response","created_at":${meta.created},"status":`;
  const model = `"model":${JSON.stringify(meta.model)}`;
  const echo = members(meta.echo);
  const response = (status: string, output: string, usage: string, end: TurnEnd | null) => {
    const incomplete = end === "length" ? '{"reason":"max_output_tokens"}' : "null";
    const more = details
      ? `,"background":false,"error":null,"incomplete_details":${incomplete}`
      : "";
    return `${head}"${status}"${more},${model},"output":${output}${echo},"usage":${usage}}`;
  };
  const part = (textJson: string, logprobs: boolean) =>
    `{"type":"output_text","text":${textJson},"annotations":[]${logprobs ? ',"logprobs":[]' : ""}}`;
  const itemJson = (textJson: string | null) => {
    const status = textJson === null ? "in_progress" : "completed";
    if (call !== null)
      return `{"id":${item},"type":"function_call","status":"${status}","call_id":${JSON.stringify(call.callId)},"name":${callName},"arguments":${textJson ?? '""'}}`;
    const content = textJson === null ? "[]" : `[${part(textJson, details)}]`;
    return `{"id":${item},"type":"message","status":"${status}","role":"assistant","content":${content}}`;
  };
  const event = (type: string, seq: number, rest: string) =>
    namedEvent(type, `{"type":"${type}","sequence_number":${seq},${rest}}`);
  const inItem = `"output_index":0,"item_id":${item}`;
  const inPart = `${inItem},"content_index":0`;
  const usageJson = (u: UsageCounts, plain: boolean) => {
    const total = u.promptTokens + u.completionTokens;
    if (plain && !details)
      return `{"input_tokens":${u.promptTokens},"output_tokens":${u.completionTokens},"total_tokens":${total}}`;
    return `{"input_tokens":${u.promptTokens},"input_tokens_details":{"cached_tokens":${u.cachedTokens ?? 0}},"output_tokens":${u.completionTokens},"output_tokens_details":{"reasoning_tokens":0},"total_tokens":${total}}`;
  };
  const whole = (textJson: string, usage: UsageCounts, end: TurnEnd, plain = false) =>
    response(
      end === "length" ? "incomplete" : "completed",
      `[${itemJson(textJson)}]`,
      usageJson(usage, plain),
      end,
    );
  // Every delta is the same event around its sequence number and piece.
  const deltaType =
    call === null ? "response.output_text.delta" : "response.function_call_arguments.delta";
  const deltaHead = `event: ${deltaType}\ndata: {"type":"${deltaType}","sequence_number":`;
  const deltaMid = call === null ? `,${inPart},"delta":` : `,${inItem},"delta":`;
  const deltaTail = call === null ? ',"logprobs":[]}\n\n' : "}\n\n";
  // Built once for both events that carry it: it echoes the request (instructions, tools).
  let started: string | null = null;
  return {
    started(type, seq) {
      started ??= response("in_progress", "[]", "null", null);
      return event(type, seq, `"response":${started}`);
    },
    itemAdded: (seq) =>
      event("response.output_item.added", seq, `"output_index":0,"item":${itemJson(null)}`),
    partAdded: (seq) =>
      event("response.content_part.added", seq, `${inPart},"part":${part('""', details)}`),
    delta: (seq, pieceJson) => deltaHead + seq + deltaMid + pieceJson + deltaTail,
    textDone: (seq, textJson) =>
      event("response.output_text.done", seq, `${inPart},"text":${textJson},"logprobs":[]`),
    partDone: (seq, textJson) =>
      event("response.content_part.done", seq, `${inPart},"part":${part(textJson, false)}`),
    argumentsDone: (seq, argumentsJson) =>
      event(
        "response.function_call_arguments.done",
        seq,
        `${inItem},"name":${callName},"arguments":${argumentsJson}`,
      ),
    itemDone: (seq, textJson) =>
      event("response.output_item.done", seq, `"output_index":0,"item":${itemJson(textJson)}`),
    completed: (seq, responseJson) =>
      event("response.completed", seq, `"response":${responseJson}`),
    error: (seq, error) =>
      event(
        "error",
        seq,
        `"code":${JSON.stringify(String(error.status))},"message":${JSON.stringify(error.message)},"param":null`,
      ),
    response: whole,
  };
}
