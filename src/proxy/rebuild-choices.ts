/**
 * The choices of a chat completion or a completion, joined from the events of its stream, and
 * the plain answer built from them (rebuild-completion.ts reads the events).
 *
 * What is joined, per choice (`index`, so `n` > 1 works): the text of every string field of
 * `delta` (`content`, `reasoning_content` or `reasoning`, `refusal`) or the legacy `text`;
 * tool calls by their `index`, `function.arguments` joined from the pieces; the arrays of
 * `logprobs` concatenated (chat's `content`/`refusal`, legacy `tokens`, `token_logprobs`,
 * `top_logprobs`, `text_offset`); the last non-null `finish_reason` and every other choice key
 * (`stop_reason`, `matched_stop`, …). Top-level keys (`system_fingerprint`, …) and the last
 * `usage` are kept as sent.
 *
 * The full response has fields the stream never carries (vLLM's non-streamed body lists every
 * field, nulls included), so the layout follows the backend type: vLLM's or SGLang's key order
 * with their null fields, then any other key the stream carried.
 */
import { asObj, type Json } from "../util/json-object.ts";
import type { RebuildSettings } from "./dialects/dialect.ts";

/**
 * What a choice holds in each OpenAI dialect: chat's a `message` joined from its deltas,
 * completions' a `text`; and the `object` its plain answer is.
 */
export const CHOICE_SHAPES = {
  chat: { message: true, object: "chat.completion" },
  completions: { message: false, object: "text_completion" },
} as const;

export type ChoiceShape = (typeof CHOICE_SHAPES)[keyof typeof CHOICE_SHAPES];

interface ToolCall {
  id: unknown;
  type: unknown;
  name: string;
  args: string;
}

export interface Choice {
  index: number;
  role: unknown;
  /** Joined string fields of `delta` (chat) or `text` (legacy), in order of first appearance. */
  texts: Map<string, string>;
  /** Other `delta` fields, last non-null value. */
  others: Json;
  toolCalls: ToolCall[];
  functionCall: { name: string; args: string } | null;
  logprobs: Json | null;
  finishReason: unknown;
  /** Other choice fields, last non-null value. */
  extras: Json;
}

/** vLLM's top-level keys up to `usage`, the same for chat and legacy completions. */
const VLLM_TOP = [
  "id",
  "object",
  "created",
  "model",
  "choices",
  "service_tier",
  "system_fingerprint",
  "usage",
];
const SGLANG_TOP = ["id", "object", "created", "model", "choices", "usage"];
const USAGE = ["prompt_tokens", "total_tokens", "completion_tokens", "prompt_tokens_details"];

/** Key order of the full response per backend type; fields the stream lacks are null. */
const LAYOUT = {
  vllm: {
    chat: {
      top: [...VLLM_TOP, "prompt_logprobs", "kv_transfer_params"],
      choice: ["index", "message", "logprobs", "finish_reason", "stop_reason"],
      message: [
        "role",
        "content",
        "refusal",
        "annotations",
        "audio",
        "function_call",
        "tool_calls",
        "reasoning_content",
      ],
    },
    completions: {
      top: [...VLLM_TOP, "kv_transfer_params"],
      choice: ["index", "text", "logprobs", "finish_reason", "stop_reason", "prompt_logprobs"],
      message: [],
    },
    usage: USAGE,
    /** vLLM lists no tool calls as `[]`. */
    noToolCalls: [] as unknown[] | null,
  },
  sglang: {
    chat: {
      top: SGLANG_TOP,
      choice: ["index", "message", "logprobs", "finish_reason", "matched_stop"],
      message: ["role", "content", "reasoning_content", "tool_calls"],
    },
    completions: {
      top: SGLANG_TOP,
      choice: ["index", "text", "logprobs", "finish_reason", "matched_stop"],
      message: [],
    },
    usage: USAGE,
    noToolCalls: null as unknown[] | null,
  },
} as const;

/** `template`'s keys first (null when unseen), then the other keys of `seen` in their order. */
function ordered(template: readonly string[], seen: Json): Json {
  const out: Json = {};
  for (const k of template) out[k] = seen[k] ?? null;
  for (const k in seen) if (!(k in out)) out[k] = seen[k];
  return out;
}

/** Keep the last non-null value of each key; a key seen only as null stays null. */
export function keepLast(into: Json, key: string, value: unknown): void {
  if (value !== null && value !== undefined) into[key] = value;
  else if (!(key in into)) into[key] = null;
}

/**
 * Per-token fields arrive as one array piece per event: arrays are appended to (in place: the
 * first piece was copied, so the array is this answer's own, and a long answer stays linear),
 * anything else keeps its last value.
 */
function mergeInto(out: Json, piece: Json): Json {
  for (const k in piece) {
    const v = piece[k];
    if (Array.isArray(v)) {
      const prev = out[k];
      if (Array.isArray(prev)) for (const x of v) prev.push(x);
      else out[k] = v.slice();
    } else keepLast(out, k, v);
  }
  return out;
}

const CHOICE_OWN_KEYS = new Set(["index", "delta", "text", "logprobs", "finish_reason"]);

function newChoice(index: number): Choice {
  return {
    index,
    role: null,
    texts: new Map(),
    others: {},
    toolCalls: [],
    functionCall: null,
    logprobs: null,
    finishReason: null,
    extras: {},
  };
}

function addToolCallDeltas(choice: Choice, deltas: unknown[]): void {
  for (const d of deltas) {
    const delta = asObj(d);
    if (delta === undefined) continue;
    const i = typeof delta.index === "number" ? delta.index : choice.toolCalls.length;
    choice.toolCalls[i] ??= { id: null, type: null, name: "", args: "" };
    const call = choice.toolCalls[i];
    if (delta.id !== undefined && delta.id !== null) call.id = delta.id;
    if (delta.type !== undefined && delta.type !== null) call.type = delta.type;
    const fn = asObj(delta.function);
    if (typeof fn?.name === "string") call.name += fn.name;
    if (typeof fn?.arguments === "string") call.args += fn.arguments;
  }
}

function addDelta(choice: Choice, delta: Json): void {
  for (const k in delta) {
    const v = delta[k];
    if (k === "role") {
      if (v !== null && v !== undefined) choice.role = v;
    } else if (k === "tool_calls") {
      if (Array.isArray(v)) addToolCallDeltas(choice, v);
    } else if (k === "function_call") {
      const fn = asObj(v);
      if (fn === undefined) continue;
      choice.functionCall ??= { name: "", args: "" };
      if (typeof fn.name === "string") choice.functionCall.name += fn.name;
      if (typeof fn.arguments === "string") choice.functionCall.args += fn.arguments;
    } else if (typeof v === "string") {
      choice.texts.set(k, (choice.texts.get(k) ?? "") + v);
    } else keepLast(choice.others, k, v);
  }
}

export function addChoice(choices: Choice[], raw: Json): void {
  const index = typeof raw.index === "number" ? raw.index : 0;
  choices[index] ??= newChoice(index);
  const choice = choices[index];
  const delta = asObj(raw.delta);
  if (delta !== undefined) addDelta(choice, delta);
  if (typeof raw.text === "string")
    choice.texts.set("text", (choice.texts.get("text") ?? "") + raw.text);
  const lp = asObj(raw.logprobs);
  if (lp !== undefined) choice.logprobs = mergeInto(choice.logprobs ?? {}, lp);
  if (raw.finish_reason !== null && raw.finish_reason !== undefined)
    choice.finishReason = raw.finish_reason;
  // Other choice fields: `token_ids` grows per event like logprobs; the rest keep the last.
  const extras: Json = {};
  for (const k in raw) if (!CHOICE_OWN_KEYS.has(k)) extras[k] = raw[k];
  mergeInto(choice.extras, extras);
}

function buildToolCalls(choice: Choice): unknown[] {
  return choice.toolCalls
    .filter((c) => c !== undefined)
    .map((c) => ({
      id: c.id,
      type: c.type ?? "function",
      function: { name: c.name, arguments: c.args },
    }));
}

function buildMessage(choice: Choice, settings: RebuildSettings): Json {
  const layout = LAYOUT[settings.flavour];
  const seen: Json = { role: choice.role ?? "assistant" };
  for (const [k, v] of choice.texts) seen[k] = v;
  for (const k in choice.others) seen[k] ??= choice.others[k];
  const calls = buildToolCalls(choice);
  seen.tool_calls = calls.length > 0 ? calls : layout.noToolCalls;
  if (calls.length > 0 && (seen.content ?? "") === "") seen.content = settings.toolCallContent;
  if (choice.functionCall !== null)
    seen.function_call = { name: choice.functionCall.name, arguments: choice.functionCall.args };
  // Newer vLLM builds call the reasoning text `reasoning`; list only the name the stream used.
  const template = layout.chat.message.filter(
    (k) => !(k === "reasoning_content" && choice.texts.has("reasoning")),
  );
  return ordered(template, seen);
}

/** The plain answer: `top`'s keys, the choices built, the last usage, in the backend's layout. */
export function buildAnswer(
  shape: ChoiceShape,
  settings: RebuildSettings,
  top: Json,
  choices: Choice[],
  usageRaw: Json | null,
): string {
  const layout = LAYOUT[settings.flavour];
  const keys = shape.message ? layout.chat : layout.completions;
  const built = choices
    .filter((c) => c !== undefined)
    .map((c) => {
      const seen: Json = { index: c.index };
      if (shape.message) seen.message = buildMessage(c, settings);
      else seen.text = c.texts.get("text") ?? "";
      seen.logprobs = c.logprobs;
      seen.finish_reason = c.finishReason;
      for (const k in c.extras) seen[k] = c.extras[k];
      return ordered(keys.choice, seen);
    });
  const seen: Json = { ...top, object: shape.object };
  seen.choices = built;
  seen.usage = usageRaw === null ? null : ordered(layout.usage, usageRaw);
  return JSON.stringify(ordered(keys.top, seen));
}
