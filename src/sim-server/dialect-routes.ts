/**
 * The Anthropic Messages routes (`POST /v1/messages`, `/v1/messages/count_tokens`) and the
 * OpenAI Responses routes (`POST /v1/responses`, `GET`/`DELETE /v1/responses/{id}`,
 * `POST /v1/responses/{id}/cancel`), served as vLLM serves them: each request becomes a chat
 * completion on the same engine (dialect-request.ts), and its answer is written in the
 * dialect (messages-writer.ts, responses-writer.ts).
 *
 * Responses are stored unless the request says `store: false` (the API's default is to
 * store), in memory, the oldest dropped past STORED_RESPONSES; `previous_response_id` names a
 * stored one whose conversation goes before the new input, and an unknown one is a 404, as a
 * backend that does not hold it answers. A stored response has finished, so `cancel` is a
 * 400, as for vLLM's responses that did not run in the background.
 */
import type { Context, Hono } from "hono";
import { chatPromptTokens } from "../engine/chat-template.ts";
import { Errors } from "../errors.ts";
import { dialectAnswer } from "./dialect-answer.ts";
import { messagesAsChat, responsesAsChat } from "./dialect-request.ts";
import type { GenerationHandlerDeps } from "./generation-handler.ts";
import { createMessagesWriter } from "./messages-writer.ts";
import { prepareParsed } from "./prepare-generation.ts";
import { parseJsonObject } from "./request-parse.ts";
import { createResponsesWriter } from "./responses-writer.ts";

type Obj = Record<string, unknown>;

/** Stored responses kept at most (the oldest go first); vLLM's in-memory store has no bound. */
export const STORED_RESPONSES = 10_000;

interface Stored {
  response: Obj;
  /** The conversation up to and including this response's output, as chat messages. */
  messages: Obj[];
}

/** Fields a response echoes from its request, as the Responses API lists them. */
const ECHOED = [
  "instructions",
  "max_output_tokens",
  "metadata",
  "parallel_tool_calls",
  "previous_response_id",
  "reasoning",
  "store",
  "temperature",
  "text",
  "tool_choice",
  "tools",
  "top_p",
  "truncation",
] as const;

const DEFAULTS: Obj = {
  instructions: null,
  max_output_tokens: null,
  metadata: {},
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: null,
  store: true,
  temperature: 1,
  text: { format: { type: "text" } },
  tool_choice: "auto",
  tools: [],
  top_p: 1,
  truncation: "disabled",
};

/** The output of a completed response as the assistant's chat message. */
function outputAsChat(response: Obj): Obj[] {
  const out: Obj[] = [];
  for (const item of (response.output as Obj[]) ?? []) {
    if (item.type === "function_call")
      out.push({
        role: "assistant",
        content: "",
        tool_calls: [
          {
            id: item.call_id,
            type: "function",
            function: { name: item.name, arguments: item.arguments },
          },
        ],
      });
    else if (item.type === "message")
      out.push({
        role: "assistant",
        content: ((item.content as Obj[]) ?? []).map((p) => p.text ?? "").join(""),
      });
  }
  return out;
}

export function registerDialectRoutes(app: Hono, deps: GenerationHandlerDeps): void {
  const stored = new Map<string, Stored>();
  const keep = (id: string, entry: Stored) => {
    stored.set(id, entry);
    if (stored.size > STORED_RESPONSES) stored.delete(stored.keys().next().value as string);
  };
  const storedOr404 = (id: string): Stored => {
    const entry = stored.get(id);
    if (entry === undefined)
      throw Errors.notFound(`Response with id '${id}' not found.`, "response_id");
    return entry;
  };
  const body = async (c: Context): Promise<Obj> => parseJsonObject(await c.req.text());

  app.post("/v1/messages", async (c) => {
    const chat = messagesAsChat(await body(c));
    const spec = prepareParsed(chat, c.req.raw.headers, "chat", deps);
    const headers = { "x-request-id": spec.requestId };
    const writer = createMessagesWriter(spec);
    return dialectAnswer(c.req.raw.signal, spec, deps, headers, writer);
  });
  app.post("/v1/messages/count_tokens", async (c) => {
    const chat = messagesAsChat({ max_tokens: 1, ...(await body(c)) });
    const input = chatPromptTokens(chat.messages as never, { addGenerationPrompt: true }).length;
    return c.json({ input_tokens: input, context_management: { original_input_tokens: input } });
  });

  app.post("/v1/responses", async (c) => {
    const req = await body(c);
    const previous = typeof req.previous_response_id === "string" ? req.previous_response_id : null;
    const history = previous === null ? [] : storedOr404(previous).messages;
    const chat = responsesAsChat(req, history);
    const spec = prepareParsed(chat, c.req.raw.headers, "chat", deps);
    const echo: Obj = {};
    for (const k of ECHOED) echo[k] = req[k] ?? DEFAULTS[k];
    const writer = createResponsesWriter(spec, {
      echo,
      completed(response) {
        if (req.store === false) return;
        const conversation = (chat.messages as Obj[]).filter((m) => m.role !== "system");
        keep(response.id as string, {
          response,
          messages: [...conversation, ...outputAsChat(response)],
        });
      },
    });
    const headers = { "x-request-id": spec.requestId };
    return dialectAnswer(c.req.raw.signal, spec, deps, headers, writer);
  });
  app.get("/v1/responses/:id", (c) => c.json(storedOr404(c.req.param("id")).response));
  app.delete("/v1/responses/:id", (c) => {
    const id = c.req.param("id");
    storedOr404(id);
    stored.delete(id);
    return c.json({ id, object: "response", deleted: true });
  });
  app.post("/v1/responses/:id/cancel", (c) => {
    storedOr404(c.req.param("id"));
    throw Errors.badRequest("Cannot cancel a synchronous response.", "response_id");
  });
}
