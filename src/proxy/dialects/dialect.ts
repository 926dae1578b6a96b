/**
 * A dialect is one API maitred speaks: OpenAI chat completions and completions, the Anthropic
 * Messages API (Claude Code) and the OpenAI Responses API (Codex, the Agents SDK). Each is one
 * module in this folder behind this one interface, and the steps of a request's trip
 * (prepare-request.ts, completion/, held-stream.ts, create-app.ts) ask it rather than branch on
 * which API a request speaks: its route, how its request names its messages, how its stream is
 * prepared, relayed and rebuilt into a plain answer, its error envelope and error events, its
 * keep-alive and its routes that generate nothing. The simulated backend is built the same way,
 * one writer per dialect (src/sim-server/dialect-answer.ts).
 */
import type { Usage } from "../../core/events.ts";
import type { AnthropicErrorBody, ErrorBody, ErrorResponse } from "../../errors.ts";
import type { Json } from "../../util/json-object.ts";

/** The dialects by name: also the `endpoint` label of the router's request metrics. */
export type DialectName = "chat" | "completions" | "messages" | "responses";

/** `always`: stream from the backend and rebuild plain answers; `as-client`: never change it. */
export type UpstreamStream = "always" | "as-client";

/** The backend type, whose layout a rebuilt plain chat or completions answer follows. */
export type ResponseFlavour = "vllm" | "sglang";

/** How a request's stream is prepared: what maitred sets in its body, and what it rebuilds. */
export interface StreamPlan {
  /** Top-level members set in the body that goes to the backend (`stream`, `stream_options`). */
  readonly put: readonly (readonly [string, unknown])[];
  /**
   * The client asked for a plain answer and the backend is asked for a stream, which the proxy
   * rebuilds into that answer; null when the answer is relayed as the backend sends it.
   */
  readonly rebuild: { readonly toolCallContent: "" | null } | null;
  /** The client asked for the usage the stream carries; when false maitred drops what it added. */
  readonly clientWantsUsage: boolean;
}

export interface ContentHooks {
  /** Content events passed: `count` = content events so far in this stream (called per chunk). */
  onContent(count: number, previous: number): void;
}

/** What the scheduler learns from an answer's events, relayed or rebuilt. */
export interface StreamReading {
  readonly contentEvents: number;
  /**
   * The last usage seen. The last, not the first: with `continuous_usage_stats` every event
   * carries a running usage and only the final one is complete.
   */
  readonly usage: Usage | null;
  /** The answer was the program's final one rather than a step of its agent loop. */
  readonly stopped: boolean;
  /** The stored response the answer made (Responses), where its backend keeps it; else null. */
  readonly responseId: string | null;
}

/** A stream on its way to the client, cut at event boundaries. */
export interface AnswerRelay extends StreamReading {
  /** Bytes to send now (null = nothing yet: an event is still incomplete). */
  push(chunk: Buffer): Buffer | null;
  /** Whatever is left when the upstream ends. */
  flush(): Buffer | null;
}

export interface RebuiltResponse {
  status: number;
  body: string;
}

/** A stream rebuilt into the plain answer its client asked for. */
export interface AnswerRebuilder extends StreamReading {
  push(chunk: Buffer): void;
  /** The answer once the stream ended; null when the stream made none (cut short, empty). */
  finish(): RebuiltResponse | null;
}

export interface RebuildSettings {
  flavour: ResponseFlavour;
  /** What a plain chat answer made of tool calls has as `message.content` (prepare's plan). */
  toolCallContent: "" | null;
}

/**
 * A route of the dialect that generates nothing and goes to a backend as it is
 * (responses-passthrough.ts); `stored`: its `:id` names a stored response.
 */
export interface PassThroughRoute {
  method: "GET" | "POST" | "DELETE";
  path: string;
  stored: boolean;
}

export interface Dialect {
  readonly name: DialectName;
  /** Its generation route, the same on maitred and on the backend. */
  readonly path: string;
  readonly passThrough: readonly PassThroughRoute[];
  /** Characters per message or prompt, the core's token estimate input. */
  messageChars(body: Json): number[];
  /** How the request is streamed from the backend (`stream` is the client's own flag). */
  prepareStream(body: Json, stream: boolean, upstreamStream: UpstreamStream): StreamPlan;
  /** The stored response the request continues, whose backend alone can serve it; else null. */
  previousResponseId(body: Json): string | null;
  relay(clientWantsUsage: boolean, hooks: ContentHooks): AnswerRelay;
  rebuild(settings: RebuildSettings, hooks: ContentHooks): AnswerRebuilder;
  /** The stored response a whole (unstreamed) 2xx answer made; else null. */
  storedResponseId(body: Buffer): string | null;
  /** An error answered by maitred, in the dialect's envelope. */
  errorBody(res: ErrorResponse): ErrorBody | AnthropicErrorBody;
  /** maitred's own error as the event that ends a stream. */
  errorEvent(error: unknown): string;
  /** A body the backend sent in place of a stream (status `status`) as the stream's last event. */
  bodyEvent(status: number, body: Buffer): string;
  /** Written after each keep-alive comment of a held stream ("" when comments suffice). */
  readonly keepAlive: string;
  /**
   * The engines read a top-level `priority` on this route (vLLM's and SGLang's chat,
   * completions and responses requests; their Messages request has none), so the engine order
   * may be written into it.
   */
  readonly takesPriority: boolean;
}
