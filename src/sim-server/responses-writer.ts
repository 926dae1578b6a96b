/**
 * The OpenAI Responses answer as vLLM writes it (its simple, non-harmony stream):
 * `response.created` and `response.in_progress` with the response `in_progress`, then one
 * output item — a `message` (`content_part.added`, `output_text.delta` per step,
 * `output_text.done`, `content_part.done`) or a `function_call` (`function_call_arguments.delta`
 * per step, `function_call_arguments.done`) — opened by `output_item.added` and closed by
 * `output_item.done`, then `response.completed` with the whole response and its usage
 * (`status: "incomplete"` when the length cut it). Every event has its `sequence_number`.
 */
import { randomUUID } from "node:crypto";
import type { MaitredError } from "../errors.ts";
import { type DialectWriter, namedEvent, type TurnEnd } from "./dialect-answer.ts";
import type { UsageCounts } from "./openai-shapes.ts";
import type { GenerationSpec } from "./prepare-generation.ts";

type Obj = Record<string, unknown>;

const hex = () => randomUUID().replaceAll("-", "");

export interface ResponsesRequestFields {
  /** The request's fields a response echoes (instructions, tools, tool_choice, …). */
  echo: Obj;
  /** Called with the completed response object (the store keeps it when `store` is on). */
  completed(response: Obj): void;
}

export function createResponsesWriter(
  spec: GenerationSpec,
  fields: ResponsesRequestFields,
): DialectWriter {
  const id = `resp_${hex()}`;
  const call = spec.choices[0].toolCall;
  const itemId = call === null ? `msg_${hex()}` : `fc_${hex()}`;
  const callId = `call_${hex()}`;
  let seq = 0;
  let text = "";
  const event = (type: string, rest: Obj) =>
    namedEvent(type, JSON.stringify({ type, sequence_number: seq++, ...rest }));
  const item = (done: boolean): Obj =>
    call === null
      ? {
          id: itemId,
          type: "message",
          status: done ? "completed" : "in_progress",
          role: "assistant",
          content: done ? [{ type: "output_text", text, annotations: [], logprobs: [] }] : [],
        }
      : {
          id: itemId,
          type: "function_call",
          status: done ? "completed" : "in_progress",
          call_id: callId,
          name: call.name,
          arguments: done ? text : "",
        };
  const response = (status: string, usage: UsageCounts | null, end: TurnEnd | null): Obj => ({
    id,
    object: "response",
    created_at: spec.meta.created,
    status,
    background: false,
    error: null,
    incomplete_details: end === "length" ? { reason: "max_output_tokens" } : null,
    model: spec.meta.model,
    output: usage === null ? [] : [item(true)],
    ...fields.echo,
    usage:
      usage === null
        ? null
        : {
            input_tokens: usage.promptTokens,
            input_tokens_details: { cached_tokens: usage.cachedTokens ?? 0 },
            output_tokens: usage.completionTokens,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: usage.promptTokens + usage.completionTokens,
          },
  });
  const whole = (usage: UsageCounts, end: TurnEnd) => {
    const r = response(end === "length" ? "incomplete" : "completed", usage, end);
    fields.completed(r);
    return r;
  };
  const base = { output_index: 0, item_id: itemId };
  return {
    step(step) {
      let out = "";
      if (step.position === 0) {
        // Serialised once for both events: it echoes the request (instructions, tools).
        const started = JSON.stringify(response("in_progress", null, null));
        for (const type of ["response.created", "response.in_progress"])
          out += namedEvent(
            type,
            `{"type":"${type}","sequence_number":${seq++},"response":${started}}`,
          );
        out += event("response.output_item.added", { output_index: 0, item: item(false) });
        if (call === null)
          out += event("response.content_part.added", {
            ...base,
            content_index: 0,
            part: { type: "output_text", text: "", annotations: [], logprobs: [] },
          });
      }
      const piece = step.pieces.join("");
      text += piece;
      if (piece !== "") {
        out +=
          call === null
            ? event("response.output_text.delta", {
                ...base,
                content_index: 0,
                delta: piece,
                logprobs: [],
              })
            : event("response.function_call_arguments.delta", { ...base, delta: piece });
      }
      if (step.finish === null) return out;
      if (call === null) {
        out += event("response.output_text.done", {
          ...base,
          content_index: 0,
          text,
          logprobs: [],
        });
        out += event("response.content_part.done", {
          ...base,
          content_index: 0,
          part: { type: "output_text", text, annotations: [] },
        });
      } else
        out += event("response.function_call_arguments.done", {
          ...base,
          name: call.name,
          arguments: text,
        });
      return out + event("response.output_item.done", { output_index: 0, item: item(true) });
    },
    finish(usage, end) {
      return event("response.completed", { response: whole(usage, end) });
    },
    error(error: MaitredError) {
      return event("error", { code: String(error.status), message: error.message, param: null });
    },
    body(usage, end) {
      return JSON.stringify(whole(usage, end));
    },
  };
}
