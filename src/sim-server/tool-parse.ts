/**
 * `tools` and `tool_choice` of a chat request, checked the way vLLM's request model checks
 * them (its messages verbatim where it has one). The result says which calls the simulated
 * model may make: null when it answers in text only.
 *
 * Defaults as vLLM's: `auto` when tools are given, `none` otherwise; an explicit null
 * `tool_choice` is the same as none sent. `parallel_tool_calls` is accepted and ignored:
 * the simulated model makes at most one call per choice, which the flag allows either way.
 */

import { Errors } from "../errors.ts";

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export interface ToolFunction {
  name: string;
  /** JSON schema of the arguments; null when the tool declares none (the arguments are `{}`). */
  parameters: Obj | null;
}

/** `auto`: the model may call; `required`: it must call one; `{ name }`: it must call that one. */
export type ToolChoice = "auto" | "required" | { name: string };

export interface ToolsRequest {
  tools: ToolFunction[];
  choice: ToolChoice;
}

const CORRECT_USAGE = 'Correct usage: `{"type": "function", "function": {"name": "my_function"}}`';

function checkTool(t: unknown, i: number): ToolFunction {
  const bad = () =>
    Errors.badRequest(
      `tools[${i}] must be {"type": "function", "function": {"name": <string>, "description"?: <string>, "parameters"?: <object>}}.`,
      "tools",
    );
  if (!isObj(t) || (t.type !== undefined && t.type !== "function")) throw bad();
  const fn = t.function;
  if (!isObj(fn) || typeof fn.name !== "string") throw bad();
  const { description, parameters } = fn;
  if (description !== undefined && description !== null && typeof description !== "string") {
    throw bad();
  }
  if (parameters !== undefined && parameters !== null && !isObj(parameters)) throw bad();
  return { name: fn.name, parameters: isObj(parameters) ? parameters : null };
}

function checkTools(raw: unknown): ToolFunction[] {
  if (!Array.isArray(raw)) throw Errors.badRequest("Field `tools` must be a list.", "tools");
  // Newer vLLM releases refuse an empty list (older ones took it as no tools).
  if (raw.length === 0) {
    throw Errors.badRequest("`tools` must not be an empty array.", "tools");
  }
  return raw.map(checkTool);
}

function namedChoice(choice: Obj, tools: ToolFunction[]): { name: string } {
  const fn = choice.function;
  const bad = (message: string) => Errors.badRequest(message, "tool_choice");
  if (!isObj(fn)) {
    throw bad(
      `Invalid value for \`function\`: \`${JSON.stringify(fn) ?? "None"}\` in \`tool_choice\`! ${CORRECT_USAGE}`,
    );
  }
  if (!("name" in fn)) {
    throw bad(`Expected field \`name\` in \`function\` in \`tool_choice\`! ${CORRECT_USAGE}`);
  }
  const name = fn.name;
  if (typeof name !== "string" || name.length === 0) {
    throw bad(
      `Invalid \`name\` in \`function\`: \`${JSON.stringify(name)}\` in \`tool_choice\`! ${CORRECT_USAGE}`,
    );
  }
  if (!tools.some((t) => t.name === name)) {
    throw bad("The tool specified in `tool_choice` does not match any of the specified `tools`");
  }
  return { name };
}

/** The tool calls a chat body allows; null when the answer is text only. */
export function parseTools(body: Obj): ToolsRequest | null {
  const given = body.tools !== undefined && body.tools !== null;
  const tools = given ? checkTools(body.tools) : [];
  const choice = body.tool_choice ?? (given ? "auto" : "none");
  if (choice === "none") return null;
  if (!given) {
    throw Errors.badRequest("When using `tool_choice`, `tools` must be set.", "tool_choice");
  }
  if (choice === "auto" || choice === "required") return { tools, choice };
  if (!isObj(choice)) {
    throw Errors.badRequest(
      `Invalid value for \`tool_choice\`: ${JSON.stringify(choice)}! Only named tools, "none", "auto" or "required" are supported.`,
      "tool_choice",
    );
  }
  return { tools, choice: namedChoice(choice, tools) };
}
