/**
 * Rebuilds the ordinary JSON answer of a completion request from the backend's SSE stream, for
 * a client that asked for no stream. maitred streams from the backend for every request
 * because the stream is how the scheduler learns a request's progress: its first token, its
 * token count as it grows, and its usage at the end. A plain JSON answer says nothing until
 * the very end.
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
 * with their null fields, then any other key the stream carried. An error event in the stream
 * (the envelope, or the flat shape SGLang writes: backend-error.ts) becomes the response as the
 * backend wrote it, with the status its `code` names.
 *
 * Content events (events with a non-empty `choices`, one per engine step) are counted as the
 * relay counts them (sse-relay.ts), so a rebuilt answer and a relayed stream feed the scheduler
 * the same progress. Framing: OpenAI-style servers end every line with `\n`, so events are cut
 * at `\n\n` with a native search; once a `\r` shows up (the SSE format also allows `\r\n`
 * and `\r`) the rest of the stream goes through eventsource-parser.
 *
 * Hot path: a token's event is, byte for byte, the previous token's event with another text in
 * it (same id, model, choice index, nulls). When the last event parsed whole has that shape (one
 * choice; its delta's `content`, or a legacy `text`, the only member that grows; every other
 * member null or a plain value), the next events are compared with it around that text (two
 * native compares) and only the text is decoded. Any other event, or one whose text is not
 * exactly one JSON string, is parsed whole and becomes the pattern if it has the shape.
 * Profiles showed the full parse and merge of every event as most of what a rebuilt answer
 * cost.
 */
import { createParser, type EventSourceParser } from "eventsource-parser";
import type { Usage } from "../core/events.ts";
import { BACKSLASH, CR, isSpace, LF, QUOTE, stringEnd } from "../util/json-bytes.ts";
import { asObj, type Json } from "../util/json-object.ts";
import { backendErrorOf } from "./backend-error.ts";
import type { Endpoint } from "./prepare-request.ts";
import { usageFrom } from "./usage.ts";

/** Largest single event: a chunk of one engine step is a few hundred bytes. */
const MAX_EVENT_BYTES = 16 * 1024 * 1024;

export type ResponseFlavour = "vllm" | "sglang";

export interface RebuildOptions {
  endpoint: Endpoint;
  flavour: ResponseFlavour;
  /**
   * `message.content` of an answer made of tool calls and no text: vLLM answers a `required`
   * or named `tool_choice` with "" and an `auto` one with null, which the stream (an empty
   * role delta either way) cannot tell apart.
   */
  toolCallContent: "" | null;
}

export interface RebuildHooks {
  /** Content events passed: `count` = content events so far (called once per chunk). */
  onContent(count: number, previous: number): void;
}

export interface RebuiltResponse {
  status: number;
  body: string;
}

export interface CompletionRebuilder {
  push(chunk: Buffer): void;
  /**
   * The answer once the stream ended; null when it is no answer: neither choices nor an error,
   * cut short (no `[DONE]` while a choice has no finish reason), or an event too large.
   */
  finish(): RebuiltResponse | null;
  readonly contentEvents: number;
  readonly usage: Usage | null;
  /** Every choice ended with `finish_reason: "stop"` and none called a tool. */
  readonly stopped: boolean;
}

interface ToolCall {
  id: unknown;
  type: unknown;
  name: string;
  args: string;
}

interface Choice {
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
function keepLast(into: Json, key: string, value: unknown): void {
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

function addChoice(choices: Choice[], raw: Json): void {
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

function buildMessage(choice: Choice, options: RebuildOptions): Json {
  const layout = LAYOUT[options.flavour];
  const seen: Json = { role: choice.role ?? "assistant" };
  for (const [k, v] of choice.texts) seen[k] = v;
  for (const k in choice.others) seen[k] ??= choice.others[k];
  const calls = buildToolCalls(choice);
  seen.tool_calls = calls.length > 0 ? calls : layout.noToolCalls;
  if (calls.length > 0 && (seen.content ?? "") === "") seen.content = options.toolCallContent;
  if (choice.functionCall !== null)
    seen.function_call = { name: choice.functionCall.name, arguments: choice.functionCall.args };
  // Newer vLLM builds call the reasoning text `reasoning`; list only the name the stream used.
  const template = layout.chat.message.filter(
    (k) => !(k === "reasoning_content" && choice.texts.has("reasoning")),
  );
  return ordered(template, seen);
}

/** A token's event but for its text: the bytes around the text, and where the text goes. */
interface TokenPattern {
  head: Buffer;
  tail: Buffer;
  index: number;
  key: "content" | "text";
}

/** Where a token's text starts in its event, for chat and legacy completions. */
const TEXT_AT = {
  chat: Buffer.from('"content":"'),
  completions: Buffer.from('"text":"'),
};

/** Index of the first `\n\n` in `buf` at or after `from`, -1 if none. */
function blankLineAt(buf: Buffer, from: number): number {
  for (let i = buf.indexOf(LF, from); i >= 0 && i + 1 < buf.length; i = buf.indexOf(LF, i + 1))
    if (buf[i + 1] === LF) return i;
  return -1;
}

/** `data: ` at `from`. */
function dataField(buf: Buffer, from: number, end: number): boolean {
  return (
    end - from >= 6 &&
    buf[from] === 0x64 &&
    buf[from + 1] === 0x61 &&
    buf[from + 2] === 0x74 &&
    buf[from + 3] === 0x61 &&
    buf[from + 4] === 0x3a &&
    buf[from + 5] === 0x20
  );
}

/** A plain JSON value: no object or array, whose pieces the merge would append. */
const scalar = (v: unknown) => v === null || typeof v !== "object";

/**
 * The event as the pattern of the next ones: the bytes before its text and after it. Null
 * unless the parsed event is one choice whose only growing part is that text (see the top).
 */
function tokenPattern(
  chat: boolean,
  event: Json,
  buf: Buffer,
  from: number,
  end: number,
): TokenPattern | null {
  for (const k in event) if (k !== "choices" && !scalar(event[k])) return null;
  const list = event.choices;
  if (!Array.isArray(list) || list.length !== 1) return null;
  const choice = asObj(list[0]);
  if (choice === undefined) return null;
  let text: unknown;
  for (const k in choice) {
    if (k === "delta" && chat) {
      // Members the merge ignores when null (SGLang sends role, reasoning and tool calls as null).
      const delta = asObj(choice.delta);
      if (delta === undefined || typeof delta.content !== "string") return null;
      for (const d in delta) if (d !== "content" && delta[d] !== null) return null;
      text = delta.content;
    } else if (k === "text" && !chat) {
      if (typeof choice.text !== "string") return null;
      text = choice.text;
    } else if (
      !scalar(choice[k]) ||
      (k === "finish_reason" && choice[k] !== null) ||
      // A chat choice's string `text` is joined per event too: not a fixed member.
      (k === "text" && typeof choice[k] === "string")
    )
      return null;
  }
  if (text === undefined) return null;
  // The one place the text's key appears, and the parsed text there: nothing else in the event
  // can be mistaken for it.
  const mark = chat ? TEXT_AT.chat : TEXT_AT.completions;
  const at = buf.indexOf(mark, from);
  if (at < 0 || at >= end) return null;
  const again = buf.indexOf(mark, at + 1);
  if (again >= 0 && again < end) return null;
  const open = at + mark.length;
  const close = stringEnd(buf, open - 1) - 1;
  if (close >= end || buf[close] !== QUOTE) return null;
  try {
    if (JSON.parse(buf.toString("utf8", open - 1, close + 1)) !== text) return null;
  } catch {
    return null;
  }
  return {
    head: Buffer.from(buf.subarray(from, open)),
    tail: Buffer.from(buf.subarray(close, end)),
    index: typeof choice.index === "number" ? choice.index : 0,
    key: chat ? "content" : "text",
  };
}

/**
 * The text of the event in `buf[from, end)` when it is `pattern` with another JSON string as
 * its text; undefined when it is anything else.
 */
function patternText(
  pattern: TokenPattern,
  buf: Buffer,
  from: number,
  end: number,
): string | undefined {
  const { head, tail } = pattern;
  const open = from + head.length;
  const close = end - tail.length;
  if (close < open) return undefined;
  if (buf.compare(head, 0, head.length, from, open) !== 0) return undefined;
  if (buf.compare(tail, 0, tail.length, close, end) !== 0) return undefined;
  let plain = true;
  for (let i = open; i < close; i++) {
    const c = buf[i];
    if (c === QUOTE || c === BACKSLASH || c < 0x20) {
      plain = false;
      break;
    }
  }
  if (plain) return buf.toString("utf8", open, close);
  // Escapes, or quotes that might end the string early: exactly one JSON string, or no match.
  try {
    const text: unknown = JSON.parse(buf.toString("utf8", open - 1, close + 1));
    return typeof text === "string" ? text : undefined;
  } catch {
    return undefined;
  }
}

export function createCompletionRebuilder(
  options: RebuildOptions,
  hooks: RebuildHooks,
): CompletionRebuilder {
  const chat = options.endpoint === "chat";
  const layout = LAYOUT[options.flavour];
  const top: Json = {};
  const choices: Choice[] = [];
  let usageRaw: Json | null = null;
  let usage: Usage | null = null;
  let error: { status: number; body: string } | null = null;
  let sawCompletion = false;
  let sawDone = false;
  /** An event grew past MAX_EVENT_BYTES without ending: not a stream we can rebuild. */
  let overflowed = false;
  let contentEvents = 0;

  /** The last event parsed whole, as the pattern of a token's event; null when it is none. */
  let pattern: TokenPattern | null = null;

  /** One event's data; `at` = where it lies in a buffer, for the pattern of the next ones. */
  const onData = (data: string, at?: { buf: Buffer; from: number; end: number }) => {
    if (data === "[DONE]") sawDone = true;
    if (error !== null || data === "[DONE]" || data === "") return;
    let event: Json | undefined;
    try {
      event = asObj(JSON.parse(data));
    } catch {
      return; // not JSON: nothing a completion is made of
    }
    if (event === undefined) return;
    const failed = backendErrorOf(event);
    if (failed !== undefined) {
      const code = failed.code;
      const status = Number.isInteger(code) && (code as number) >= 400 && (code as number) < 600;
      error = { status: status ? (code as number) : 500, body: data };
      return;
    }
    sawCompletion = true;
    for (const k in event) {
      if (k === "choices" || k === "usage" || k === "object") continue;
      if (k === "id" || k === "created" || k === "model") top[k] ??= event[k];
      else keepLast(top, k, event[k]);
    }
    const u = asObj(event.usage);
    if (u !== undefined) {
      usageRaw = u;
      usage = usageFrom(event) ?? usage;
    }
    if (Array.isArray(event.choices) && event.choices.length > 0) {
      contentEvents++;
      for (const c of event.choices) {
        const raw = asObj(c);
        if (raw !== undefined) addChoice(choices, raw);
      }
    }
    // The pattern is always the last event applied whole, or none: a token matching it changes
    // nothing but the text, since every other member it carries was just set the same way.
    pattern = at === undefined ? null : tokenPattern(chat, event, at.buf, at.from, at.end);
  };

  /** The event in `buf[from, end)` (LF line endings): its `data:` lines joined. */
  const lfEvent = (buf: Buffer, from: number, end: number) => {
    const single = buf.indexOf(LF, from);
    if ((single < 0 || single >= end) && dataField(buf, from, end)) {
      let a = from + 6;
      let b = end;
      while (a < b && isSpace(buf[a])) a++;
      while (b > a && isSpace(buf[b - 1])) b--;
      if (pattern !== null && error === null) {
        const text = patternText(pattern, buf, a, b);
        if (text !== undefined) {
          const choice = choices[pattern.index];
          choice.texts.set(pattern.key, (choice.texts.get(pattern.key) ?? "") + text);
          contentEvents++;
          return;
        }
      }
      onData(buf.toString("utf8", a, b).trim(), { buf, from: a, end: b });
      return;
    }
    let data: string | null = null;
    for (const line of buf.toString("utf8", from, end).split("\n")) {
      if (!line.startsWith("data:")) continue;
      const value = line.charCodeAt(5) === 0x20 ? line.slice(6) : line.slice(5);
      data = data === null ? value : `${data}\n${value}`;
    }
    if (data !== null) onData(data.trim());
  };
  /** Bytes of an event not yet ended, kept as they came: joined only once a boundary arrives. */
  const pending: Buffer[] = [];
  let pendingBytes = 0;
  let general: { parser: EventSourceParser; decoder: InstanceType<typeof TextDecoder> } | null =
    null;
  const feed = (chunk: Buffer) => {
    if (general === null && chunk.indexOf(CR) >= 0) {
      general = {
        parser: createParser({ onEvent: (e) => onData(e.data.trim()) }),
        decoder: new TextDecoder(),
      };
      for (const p of pending) general.parser.feed(general.decoder.decode(p, { stream: true }));
      pending.length = 0;
      pendingBytes = 0;
    }
    if (general !== null) {
      general.parser.feed(general.decoder.decode(chunk, { stream: true }));
      return;
    }
    const last = pending.at(-1);
    const ends =
      blankLineAt(chunk, 0) >= 0 ||
      (last !== undefined && last[last.length - 1] === LF && chunk[0] === LF);
    if (!ends) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes > MAX_EVENT_BYTES) overflowed = true;
      return;
    }
    const buf = pending.length === 0 ? chunk : Buffer.concat([...pending, chunk]);
    let from = 0;
    for (
      let end = blankLineAt(buf, Math.max(0, pendingBytes - 1));
      end >= 0;
      end = blankLineAt(buf, from)
    ) {
      if (end > from) lfEvent(buf, from, end);
      from = end + 2;
    }
    pending.length = 0;
    pendingBytes = buf.length - from;
    if (pendingBytes > 0) pending.push(Buffer.from(buf.subarray(from)));
  };
  const counted = (push: () => void) => {
    const before = contentEvents;
    push();
    if (contentEvents !== before) hooks.onContent(contentEvents, before);
  };

  const build = (): string => {
    const shape = chat ? layout.chat : layout.completions;
    const built = choices
      .filter((c) => c !== undefined)
      .map((c) => {
        const seen: Json = { index: c.index };
        if (chat) seen.message = buildMessage(c, options);
        else seen.text = c.texts.get("text") ?? "";
        seen.logprobs = c.logprobs;
        seen.finish_reason = c.finishReason;
        for (const k in c.extras) seen[k] = c.extras[k];
        return ordered(shape.choice, seen);
      });
    const seen: Json = { ...top, object: chat ? "chat.completion" : "text_completion" };
    seen.choices = built;
    seen.usage = usageRaw === null ? null : ordered(layout.usage, usageRaw);
    return JSON.stringify(ordered(shape.top, seen));
  };

  return {
    push(chunk) {
      if (!overflowed) counted(() => feed(chunk));
    },
    finish() {
      if (overflowed) return null;
      // An unterminated last event still counts.
      counted(() => {
        if (general !== null) general.parser.feed(`${general.decoder.decode()}\n\n`);
        else if (pendingBytes > 0) {
          const rest = Buffer.concat(pending);
          lfEvent(rest, 0, rest.length);
        }
        pending.length = 0;
        pendingBytes = 0;
      });
      if (error !== null) return error;
      if (!sawCompletion) return null;
      // A stream cut short (no [DONE], a choice without its finish reason) is no answer.
      if (!sawDone && choices.some((c) => c !== undefined && c.finishReason === null)) return null;
      return { status: 200, body: build() };
    },
    get contentEvents() {
      return contentEvents;
    },
    get usage() {
      return usage;
    },
    get stopped() {
      let any = false;
      for (const c of choices) {
        if (c === undefined) continue;
        if (c.finishReason !== "stop" || c.toolCalls.length > 0 || c.functionCall !== null)
          return false;
        any = true;
      }
      return any;
    },
  };
}
