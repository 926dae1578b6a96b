/**
 * Turns a client's completion request into what the core and the backend need: identity,
 * the message sizes the core estimates tokens from, the streaming flags, the priority class
 * (when priorities are on) and the body to forward. The body is re-serialised only when maitred
 * changed it (identity or class fields removed, `stream_options.include_usage` added);
 * otherwise the client's bytes go through untouched.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { IdentitySource } from "../config/identity-sources.ts";
import type { PriorityClass } from "../core/api.ts";
import { Errors } from "../errors.ts";
import { type ProgramIdentity, resolveProgramIdentity } from "./program-identity.ts";
import type { ClassResolver } from "./request-class.ts";

export type Endpoint = "chat" | "completions";

export const ENDPOINT_PATHS: Record<Endpoint, string> = {
  chat: "/v1/chat/completions",
  completions: "/v1/completions",
};

export interface PreparedRequest {
  endpoint: Endpoint;
  identity: ProgramIdentity;
  stream: boolean;
  /** The client asked for the usage chunk; when false maitred drops the one it added. */
  clientWantsUsage: boolean;
  messageChars: number[];
  maxWaitMs: number | undefined;
  /** Effective (clamped) class; null while priorities are off. */
  priorityClass: PriorityClass | null;
  /** The tenant's ceiling lowered the requested class. */
  classClamped: boolean;
  body: Buffer;
}

type Json = Record<string, unknown>;

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
  return doc as Json;
}

function partChars(part: unknown): number {
  if (typeof part === "string") return part.length;
  if (part && typeof part === "object" && typeof (part as Json).text === "string") {
    return ((part as Json).text as string).length;
  }
  return JSON.stringify(part ?? "").length;
}

/** Characters per message (chat) or per prompt (completions), the core's token estimate input. */
export function messageCharsOf(endpoint: Endpoint, body: Json): number[] {
  if (endpoint === "chat") {
    const messages = body.messages;
    if (!Array.isArray(messages)) return [];
    return messages.map((m) => {
      if (!m || typeof m !== "object") return 0;
      const msg = m as Json;
      let n = 0;
      if (typeof msg.content === "string") n += msg.content.length;
      else if (Array.isArray(msg.content)) for (const p of msg.content) n += partChars(p);
      if (Array.isArray(msg.tool_calls)) n += JSON.stringify(msg.tool_calls).length;
      return n;
    });
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

export function prepareRequest(
  endpoint: Endpoint,
  raw: Buffer,
  headers: IncomingHttpHeaders,
  identityOrder: readonly IdentitySource[],
  classes: ClassResolver | null = null,
): PreparedRequest {
  const body = parseBody(raw);
  const maxWaitMs = maxWaitOf(headers);
  const identity = resolveProgramIdentity(body, headers, identityOrder);
  const cls = classes === null ? null : classes.resolve(body, headers);
  const stream = body.stream === true;
  let modified = identity.stripped || cls?.stripped === true;
  let clientWantsUsage = false;
  if (stream) {
    const so = body.stream_options;
    if (so !== undefined && so !== null && (typeof so !== "object" || Array.isArray(so))) {
      throw Errors.badRequest("stream_options must be an object", "stream_options");
    }
    clientWantsUsage = (so as Json | undefined)?.include_usage === true;
    if (!clientWantsUsage) {
      // Usage is how the books learn real token counts (ThunderAgent adds it too).
      body.stream_options = { ...((so as Json | null) ?? {}), include_usage: true };
      modified = true;
    }
  }
  return {
    endpoint,
    identity,
    stream,
    clientWantsUsage,
    messageChars: messageCharsOf(endpoint, body),
    maxWaitMs,
    priorityClass: cls?.priorityClass ?? null,
    classClamped: cls?.clamped === true,
    body: modified ? Buffer.from(JSON.stringify(body)) : raw,
  };
}
