/**
 * Turns a client's completion request into what the core and the backend need: identity,
 * the message sizes the core estimates tokens from, the streaming flags, the priority class
 * (when priorities are on) and the body to forward. The body is re-serialised only when maitred
 * changed it (identity or class fields removed, `stream_options.include_usage` added, a plain
 * request turned into a streamed one); otherwise the client's bytes go through untouched.
 *
 * Upstream is a stream for every request it can be (`--upstream-stream always`, the default):
 * the stream is how the scheduler sees a request's first token and progress, and the proxy
 * rebuilds the plain JSON answer for a client that asked for none. A request the backend would
 * treat differently when streamed goes as the client sent it: `stream_options` without
 * `stream` (the backend's own 400 stays the answer), `prompt_logprobs` (vLLM refuses it in a
 * stream), beam search and `best_of` > 1 (whole-sequence search has no stream).
 */
import type { IncomingHttpHeaders } from "node:http";
import type { IdentitySource } from "../config/identity-sources.ts";
import type { PriorityClass, ProgramBudget } from "../core/api.ts";
import { Errors } from "../errors.ts";
import type { CallerResolver } from "./caller.ts";
import type { BudgetResolver } from "./program-budget.ts";
import { type ProgramIdentity, resolveProgramIdentity } from "./program-identity.ts";
import { scopedProgramId } from "./program-scope.ts";
import type { ClassResolver } from "./request-class.ts";
import { type ResponseHomes, reachable } from "./response-homes.ts";
import { spliceTopLevel } from "./splice-body.ts";

/**
 * The generation APIs maitred schedules: OpenAI chat completions and completions, the
 * Anthropic Messages API (Claude Code) and the OpenAI Responses API (Codex, the Agents SDK).
 */
export type Endpoint = "chat" | "completions" | "messages" | "responses";

/** The agent APIs, whose streams are named events (`event:` lines) with usage always in them. */
export const isAgentApi = (e: Endpoint): e is "messages" | "responses" =>
  e === "messages" || e === "responses";

/** `always`: stream from the backend and rebuild plain answers; `as-client`: never change it. */
export type UpstreamStream = "always" | "as-client";

export const ENDPOINT_PATHS: Record<Endpoint, string> = {
  chat: "/v1/chat/completions",
  completions: "/v1/completions",
  messages: "/v1/messages",
  responses: "/v1/responses",
};

export interface PreparedRequest {
  endpoint: Endpoint;
  identity: ProgramIdentity;
  /** The caller's tenant (caller.ts); null = anonymous. */
  tenant: string | null;
  /** The core's keys for the program and its parent: the ids scoped by the caller. */
  programKey: string | null;
  parentKey: string | null;
  stream: boolean;
  /**
   * The client asked for a plain answer and the backend is asked for a stream, which the proxy
   * rebuilds into that answer; null when the answer is relayed as the backend sends it.
   */
  rebuild: { toolCallContent: "" | null } | null;
  /** The client asked for the usage chunk; when false maitred drops the one it added. */
  clientWantsUsage: boolean;
  messageChars: number[];
  maxWaitMs: number | undefined;
  /** Effective (clamped) class; null while priorities are off. */
  priorityClass: PriorityClass | null;
  /** The tenant's ceiling lowered the requested class. */
  classClamped: boolean;
  /** The budget its program is asked to run under (program-budget.ts); undefined = none. */
  budget: ProgramBudget | undefined;
  /**
   * The stored response a Responses request continues (`previous_response_id`): its backend
   * is the only one that can serve it (response-homes.ts); null = none.
   */
  previousResponseId: string | null;
  /**
   * That response is another caller's (response-homes.ts `reachable`): the request goes as one
   * naming an id no backend stores, pinned nowhere and answered by maitred with that 404
   * (unknown-response.ts), so the backend storing it is never asked.
   */
  previousResponseForeign: boolean;
  body: Buffer;
}

type Json = Record<string, unknown>;

/**
 * Deepest nesting a request may have. OpenAI requests nest a handful of levels (a tool's JSON
 * schema a few more); Python's JSON decoder, which the backends use, stops near 1,000, and
 * walking a deeper value would only spend the router's stack.
 */
export const MAX_JSON_DEPTH = 128;

/** Whether `doc` nests deeper than `limit` (walked without recursion; strings are not entered). */
function tooDeep(doc: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[doc, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (depth > limit) return true;
    if (Array.isArray(v)) {
      for (const x of v) if (typeof x === "object" && x !== null) stack.push([x, depth + 1]);
    } else if (typeof v === "object" && v !== null) {
      for (const k in v) {
        const x = (v as Json)[k];
        if (typeof x === "object" && x !== null) stack.push([x, depth + 1]);
      }
    }
  }
  return false;
}

function parseBody(raw: Buffer): Json {
  let doc: unknown;
  try {
    doc = JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw Errors.invalidJson((err as Error).message);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw Errors.badRequest("Request body must be a JSON object.");
  }
  if (tooDeep(doc, MAX_JSON_DEPTH)) throw Errors.jsonTooDeep(MAX_JSON_DEPTH);
  return doc as Json;
}

function partChars(part: unknown): number {
  if (typeof part === "string") return part.length;
  if (part && typeof part === "object" && typeof (part as Json).text === "string") {
    return ((part as Json).text as string).length;
  }
  return JSON.stringify(part ?? "").length;
}

/** Characters of a message or item: its content (a string or parts) and its tool calls. */
function itemChars(m: unknown): number {
  if (!m || typeof m !== "object") return typeof m === "string" ? m.length : 0;
  const msg = m as Json;
  let n = 0;
  if (typeof msg.content === "string") n += msg.content.length;
  else if (Array.isArray(msg.content)) for (const p of msg.content) n += partChars(p);
  if (Array.isArray(msg.tool_calls)) n += JSON.stringify(msg.tool_calls).length;
  // Responses items other than messages: a call's arguments, a call's output.
  if (typeof msg.arguments === "string") n += msg.arguments.length;
  if (typeof msg.output === "string") n += msg.output.length;
  return n;
}

/** The system prompt or instructions, a string or text blocks, as one message's characters. */
function systemChars(v: unknown): number[] {
  if (typeof v === "string") return v === "" ? [] : [v.length];
  if (!Array.isArray(v)) return [];
  let n = 0;
  for (const p of v) n += partChars(p);
  return [n];
}

/**
 * Characters per message (chat, Messages with its system prompt first, Responses with its
 * instructions first and one entry per input item) or per prompt (completions), the core's
 * token estimate input.
 */
export function messageCharsOf(endpoint: Endpoint, body: Json): number[] {
  if (endpoint === "chat" || endpoint === "messages") {
    const messages = body.messages;
    const head = endpoint === "messages" ? systemChars(body.system) : [];
    if (!Array.isArray(messages)) return head;
    return [...head, ...messages.map(itemChars)];
  }
  if (endpoint === "responses") {
    const head = systemChars(body.instructions);
    const input = body.input;
    if (typeof input === "string") return [...head, input.length];
    return Array.isArray(input) ? [...head, ...input.map(itemChars)] : head;
  }
  const prompt = body.prompt;
  if (typeof prompt === "string") return [prompt.length];
  if (Array.isArray(prompt)) {
    // A list of strings is several prompts; a list of numbers is one tokenised prompt.
    if (prompt.every((p) => typeof p === "number")) return [JSON.stringify(prompt).length];
    return prompt.map(partChars);
  }
  return [];
}

function maxWaitOf(headers: IncomingHttpHeaders): number | undefined {
  const raw = headers["x-maitred-max-wait-ms"];
  if (raw === undefined) return undefined;
  const n = Number(Array.isArray(raw) ? raw[0] : raw);
  if (!Number.isFinite(n) || n < 0) {
    throw Errors.badRequest(
      "x-maitred-max-wait-ms must be a number of milliseconds ≥ 0",
      "x-maitred-max-wait-ms",
    );
  }
  return n;
}

/** Whether the backend answers this request the same when it is streamed (see the header). */
function streamsTheSame(body: Json): boolean {
  const absent = (v: unknown) => v === undefined || v === null;
  return (
    absent(body.stream_options) &&
    absent(body.prompt_logprobs) &&
    body.use_beam_search !== true &&
    (absent(body.best_of) || body.best_of === 1)
  );
}

/**
 * vLLM's `message.content` beside tool calls in a plain answer: "" when the call was forced
 * (`required` or a named function), null when the model chose it (`auto`).
 */
function toolCallContentOf(toolChoice: unknown): "" | null {
  return toolChoice === "required" || (typeof toolChoice === "object" && toolChoice !== null)
    ? ""
    : null;
}

export function prepareRequest(
  endpoint: Endpoint,
  raw: Buffer,
  headers: IncomingHttpHeaders,
  identityOrder: readonly IdentitySource[],
  classes: ClassResolver | null = null,
  upstreamStream: UpstreamStream = "always",
  callers: CallerResolver | null = null,
  budgets: BudgetResolver | null = null,
  homes: Pick<ResponseHomes, "get"> | null = null,
): PreparedRequest {
  const body = parseBody(raw);
  const keysBefore = Object.keys(body);
  const maxWaitMs = maxWaitOf(headers);
  const tenant = callers === null ? null : callers.tenantOf(headers);
  // The stored responses as this caller sees them: another caller's is no response at all.
  const homeOf = (id: string) => {
    const home = homes?.get(id);
    return reachable(home, tenant) ? home : undefined;
  };
  // A chain begun without an id is followed from its second step, named after its first.
  const identity = resolveProgramIdentity(body, headers, identityOrder, (id) => {
    const home = homeOf(id);
    return home === undefined ? null : (home.programId ?? id);
  });
  const budget = budgets?.budgetOf(tenant, headers);
  const scoped = (id: string | null) => (id === null ? null : scopedProgramId(tenant, id));
  const cls = classes === null ? null : classes.resolve(body, headers);
  const stream = body.stream === true;
  /** Top-level members maitred sets; removed ones are found by comparing the keys. */
  const put: [string, unknown][] = [];
  // Identity fields may have been taken out of `extra_body` in place.
  if (identity.stripped && typeof body.extra_body === "object" && body.extra_body !== null)
    put.push(["extra_body", body.extra_body]);
  let clientWantsUsage = false;
  let rebuild: PreparedRequest["rebuild"] = null;
  if (isAgentApi(endpoint)) {
    // Their streams always carry usage; a plain request is streamed and rebuilt, but for a
    // background response (answered at once, before it runs), which has nothing to stream.
    clientWantsUsage = true;
    if (!stream && upstreamStream === "always" && body.background !== true) {
      put.push(["stream", true]);
      rebuild = { toolCallContent: null };
    }
  } else if (!stream && upstreamStream === "always" && streamsTheSame(body)) {
    put.push(["stream", true], ["stream_options", { include_usage: true }]);
    rebuild = { toolCallContent: toolCallContentOf(body.tool_choice) };
  } else if (stream) {
    const so = body.stream_options;
    if (so !== undefined && so !== null && (typeof so !== "object" || Array.isArray(so))) {
      throw Errors.badRequest("stream_options must be an object", "stream_options");
    }
    clientWantsUsage = (so as Json | undefined)?.include_usage === true;
    // Usage is how the books learn real token counts (ThunderAgent adds it too).
    if (!clientWantsUsage)
      put.push(["stream_options", { ...((so as Json | null) ?? {}), include_usage: true }]);
  }
  const dropped = new Set(keysBefore.filter((k) => !Object.hasOwn(body, k)));
  const previousResponseId =
    endpoint === "responses" && typeof body.previous_response_id === "string"
      ? body.previous_response_id
      : null;
  return {
    endpoint,
    identity,
    tenant,
    programKey: scoped(identity.programId),
    parentKey: scoped(identity.parentProgramId),
    stream,
    rebuild,
    clientWantsUsage,
    messageChars: messageCharsOf(endpoint, body),
    maxWaitMs,
    priorityClass: cls?.priorityClass ?? null,
    classClamped: cls?.clamped === true,
    budget,
    previousResponseId,
    previousResponseForeign:
      previousResponseId !== null && !reachable(homes?.get(previousResponseId), tenant),
    body: dropped.size > 0 || put.length > 0 ? spliceTopLevel(raw, dropped, put, keysBefore) : raw,
  };
}
