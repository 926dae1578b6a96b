/**
 * The Anthropic Messages and OpenAI Responses request bodies as the chat completions body the
 * simulated engine serves, as vLLM serves both APIs: it converts each request to a chat
 * completion (its `anthropic/serving.py` and the Responses serving code) and converts the
 * answer back. Only what changes the prompt, the length or the tool call is carried over:
 * the system prompt, the messages and their tool calls and results, `tools` and `tool_choice`,
 * the token limit. Fields the simulated model has no use for (`thinking`, `metadata`,
 * `reasoning`, `include`, …) are accepted and ignored, as unknown chat fields are.
 */
import { Errors } from "../errors.ts";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The text of a string or of the text blocks of a content list. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let out = "";
  for (const b of content) {
    if (!isObj(b)) continue;
    if (typeof b.text === "string") out += b.text;
    else if (b.type === "tool_result" || b.type === "function_call_output")
      out += textOf(b.content);
  }
  return out;
}

/** The body's tool list as chat `tools`; a tool with no schema (a server tool) is left out. */
function chatTools(tools: unknown, schemaKey: "input_schema" | "parameters"): Obj[] | undefined {
  if (tools === undefined || tools === null) return undefined;
  if (!Array.isArray(tools)) throw Errors.badRequest("Field `tools` must be a list.", "tools");
  const out: Obj[] = [];
  for (const t of tools) {
    if (!isObj(t) || typeof t.name !== "string") continue;
    if (schemaKey === "parameters" && t.type !== "function") continue;
    const parameters = isObj(t[schemaKey]) ? t[schemaKey] : undefined;
    if (schemaKey === "input_schema" && parameters === undefined) continue;
    out.push({ type: "function", function: { name: t.name, parameters } });
  }
  return out.length > 0 ? out : undefined;
}

/** Anthropic `tool_choice` → chat (`any` is `required`), as vLLM converts it. */
function messagesToolChoice(choice: unknown): unknown {
  if (!isObj(choice)) return undefined;
  if (choice.type === "any") return "required";
  if (choice.type === "tool") return { type: "function", function: { name: choice.name } };
  return choice.type;
}

/** Responses `tool_choice` → chat. */
function responsesToolChoice(choice: unknown): unknown {
  if (typeof choice === "string") return choice;
  if (isObj(choice) && choice.type === "function")
    return { type: "function", function: { name: choice.name } };
  return undefined;
}

/** Anthropic messages → chat messages: tool_use blocks become tool calls, tool_result tool messages. */
function messagesToChat(body: Obj): Obj[] {
  const out: Obj[] = [];
  const system = textOf(body.system);
  if (system !== "") out.push({ role: "system", content: system });
  if (!Array.isArray(body.messages))
    throw Errors.badRequest("Field `messages` must be a list.", "messages");
  for (const m of body.messages) {
    if (!isObj(m) || typeof m.role !== "string")
      throw Errors.badRequest("Each message must be an object with a `role`.", "messages");
    if (!Array.isArray(m.content)) {
      out.push({ role: m.role, content: textOf(m.content) });
      continue;
    }
    const calls: Obj[] = [];
    let text = "";
    for (const b of m.content) {
      if (!isObj(b)) continue;
      if (b.type === "tool_use") {
        const args = JSON.stringify(b.input ?? {});
        calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: args } });
      } else if (b.type === "tool_result") {
        out.push({ role: "tool", tool_call_id: b.tool_use_id ?? "", content: textOf(b.content) });
      } else if (typeof b.text === "string") text += b.text;
      else if (typeof b.thinking === "string") text += b.thinking;
    }
    if (text !== "" || calls.length > 0)
      out.push({ role: m.role, content: text, ...(calls.length > 0 && { tool_calls: calls }) });
  }
  return out;
}

/**
 * vLLM's sampling extensions (`ignore_eos`, `min_tokens`), which its requests of every API
 * accept beside the API's own fields: a driver that fixes each answer's length sends them.
 */
function samplingExtras(body: Obj): Obj {
  const out: Obj = {};
  if (body.ignore_eos !== undefined) out.ignore_eos = body.ignore_eos;
  if (body.min_tokens !== undefined) out.min_tokens = body.min_tokens;
  return out;
}

/**
 * The chat body of a Messages request. A `priority` is not carried over: vLLM's Anthropic
 * request has no such field and ignores the key, as it ignores any key it does not know.
 */
export function messagesAsChat(body: Obj): Obj {
  if (typeof body.max_tokens !== "number" || !Number.isInteger(body.max_tokens))
    throw Errors.badRequest("Field `max_tokens` is required and must be an integer.", "max_tokens");
  const tools = chatTools(body.tools, "input_schema");
  return {
    model: body.model,
    messages: messagesToChat(body),
    max_tokens: body.max_tokens,
    ...samplingExtras(body),
    stream: body.stream === true,
    ...(tools && { tools, tool_choice: messagesToolChoice(body.tool_choice) ?? "auto" }),
  };
}

/** Responses input items → chat messages (reasoning items and unknown types are left out). */
export function responsesInputAsChat(input: unknown): Obj[] {
  if (typeof input === "string") return [{ role: "user", content: input }];
  if (!Array.isArray(input))
    throw Errors.badRequest("Field `input` must be a string or a list.", "input");
  const out: Obj[] = [];
  for (const item of input) {
    if (!isObj(item)) continue;
    const type = item.type ?? "message";
    if (type === "message" && typeof item.role === "string") {
      out.push({ role: item.role, content: textOf(item.content) });
    } else if (type === "function_call") {
      const call = {
        id: item.call_id,
        type: "function",
        function: { name: item.name, arguments: item.arguments ?? "" },
      };
      const last = out.at(-1);
      if (last?.role === "assistant" && Array.isArray(last.tool_calls)) last.tool_calls.push(call);
      else out.push({ role: "assistant", content: "", tool_calls: [call] });
    } else if (type === "function_call_output") {
      const output = typeof item.output === "string" ? item.output : textOf(item.output);
      out.push({ role: "tool", tool_call_id: item.call_id ?? "", content: output });
    }
  }
  return out;
}

/** The chat body of a Responses request, its history (`previous_response_id`) first. */
export function responsesAsChat(body: Obj, history: Obj[]): Obj {
  const messages: Obj[] = [];
  if (typeof body.instructions === "string" && body.instructions !== "")
    messages.push({ role: "system", content: body.instructions });
  messages.push(...history, ...responsesInputAsChat(body.input ?? []));
  const tools = chatTools(body.tools, "parameters");
  const max = body.max_output_tokens;
  return {
    model: body.model,
    messages,
    ...(typeof max === "number" && { max_tokens: max }),
    ...samplingExtras(body),
    // The Responses request has vLLM's `priority` field, checked as the chat body checks it.
    ...(body.priority !== undefined && { priority: body.priority }),
    stream: body.stream === true,
    ...(tools && { tools, tool_choice: responsesToolChoice(body.tool_choice) ?? "auto" }),
  };
}
