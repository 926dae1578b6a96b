/**
 * The simulated backend's OpenAI Responses answer, from the engine's steps of the request's one
 * choice: the first step opens the response and its output item, every step with text adds a
 * delta, the last closes the item; `response.completed` follows once the usage is known. The
 * bytes are responses-events.ts's; the ids are new per answer, as vLLM's are.
 */
import { randomUUID } from "node:crypto";
import { type AnswerFields, SIM_BACKEND_FIELDS } from "./answer-fields.ts";
import type { DialectWriter } from "./dialect-answer.ts";
import type { GenerationSpec } from "./prepare-generation.ts";
import { createResponsesEvents } from "./responses-events.ts";

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
  request: ResponsesRequestFields,
  fields: AnswerFields = SIM_BACKEND_FIELDS,
): DialectWriter {
  const call = spec.choices[0].toolCall;
  const responseId = `resp_${hex()}`;
  const itemId = call === null ? `msg_${hex()}` : `fc_${hex()}`;
  const callId = `call_${hex()}`;
  const events = createResponsesEvents(
    {
      responseId,
      itemId,
      created: spec.meta.created,
      model: spec.meta.model,
      echo: request.echo,
      call: call === null ? null : { callId, name: call.name },
    },
    fields,
  );
  let seq = 0;
  let text = "";
  return {
    step(step) {
      let out = "";
      if (step.position === 0) {
        out += events.started("response.created", seq++);
        out += events.started("response.in_progress", seq++);
        out += events.itemAdded(seq++);
        if (call === null) out += events.partAdded(seq++);
      }
      const piece = step.pieces.join("");
      text += piece;
      if (piece !== "") out += events.delta(seq++, JSON.stringify(piece));
      if (step.finish === null) return out;
      const whole = JSON.stringify(text);
      if (call === null) {
        out += events.textDone(seq++, whole);
        out += events.partDone(seq++, whole);
      } else out += events.argumentsDone(seq++, whole);
      return out + events.itemDone(seq++, whole);
    },
    finish(usage, end) {
      const response = events.response(JSON.stringify(text), usage, end);
      request.completed(JSON.parse(response));
      return events.completed(seq++, response);
    },
    error: (error) => events.error(seq++, error),
    body(usage, end) {
      const body = events.response(JSON.stringify(text), usage, end, true);
      request.completed(JSON.parse(body));
      return body;
    },
  };
}
