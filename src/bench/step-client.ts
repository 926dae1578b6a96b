import { Pool } from "undici";
import type { ChatMessage } from "../engine/chat-template.ts";
import { asObj } from "../util/json-object.ts";
import { apiRequest, type BenchApi } from "./api-request.ts";
import { parseRetryAfter } from "./retry-policy.ts";
import {
  completionFromJson,
  createSseCompletionReader,
  type StreamedCompletion,
} from "./sse-completion.ts";

/**
 * The bench's HTTP side: one chat completion (or Messages or Responses request, `--api`) per
 * agent step against any OpenAI-compatible URL (maitred, a bare vLLM/SGLang or the simulated backend, another router), over one undici
 * keep-alive pool, plus the program release call. Completions are streamed with usage
 * (sse-completion.ts) so the first token's arrival is seen; the program's class goes as header
 * `x-priority`, a sub-agent's parent as `x-parent-program-id`. A stream maitred held has its
 * 200 and head sent before it is seated, so what the headers would say (time held,
 * Retry-After) and the status of an error come in its `: maitred` comment instead; the step is
 * recorded as the same answer without a hold would be.
 * The driver (closed-loop.ts) only sees the `StepClient` interface, so it can run against a
 * fake in tests.
 */

export interface StepRequest {
  programId: string;
  /** A sub-agent's parent: sent as header `x-parent-program-id`; absent = no header. */
  parentProgramId?: string;
  model: string;
  messages: ChatMessage[];
  /** Exact output length: sent as `max_tokens` with `ignore_eos`. */
  maxTokens: number;
  /** Sent as header `x-priority`; absent = no header (the router's `default`). */
  priorityClass?: string;
  /**
   * The answer ends as a final or text answer does (`finish_reason: "stop"`, no tool call):
   * asked of a simulated backend with header `x-sim-finish: stop`; others ignore it.
   */
  answerStops?: boolean;
  /** Called once, when the first output token arrives (TTFT; streamed requests only). */
  onFirstToken?: () => void;
  /**
   * false = a plain JSON request, as most agent harnesses send (no first token to see);
   * default true: `stream` with `stream_options.include_usage`.
   */
  stream?: boolean;
}

export type StepResponse =
  | {
      ok: true;
      promptTokens: number;
      /** null when the backend does not report `prompt_tokens_details`. */
      cachedTokens: number | null;
      completionTokens: number;
      pausedMs: number;
      /** The assistant's text, sent back in the next turn so its KV is reused. */
      text: string | undefined;
    }
  | {
      ok: false;
      /**
       * `http_<status>` (+ `_<error type>`), or `stream_error` (an error event with no status: a
       * stream that failed after its first event), `transport_<code>`, or `bad_response`.
       */
      kind: string;
      status: number | null;
      /** `Retry-After` in ms, when the server sent one. */
      retryAfterMs: number | null;
    };

export interface StepClient {
  send(request: StepRequest, signal: AbortSignal): Promise<StepResponse>;
  /**
   * `POST /programs/release`; a 404 (a bare backend) and transport errors are ignored, as the
   * program's idle timeout on the router cleans up the rest. Whether an answer came (of any
   * status): a caller that counts what the router logs counts only those.
   */
  release(programId: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface StepClientOptions {
  /** Base URL; a trailing `/v1` is accepted and stripped. */
  url: string;
  /** The API each step is sent in (api-request.ts); default chat completions. */
  api?: BenchApi;
  /** Keep-alive connections (one per concurrent program is enough). */
  connections: number;
  headers?: Record<string, string>;
}

/**
 * Router header: how long maitred held the request before forwarding it (on a held stream,
 * field `paused_ms` of its comment).
 */
export const PAUSED_MS_HEADER = "x-maitred-paused-ms";
/** The class header maitred reads. */
export const PRIORITY_HEADER = "x-priority";
/** The header naming a sub-agent's parent program. */
export const PARENT_HEADER = "x-parent-program-id";

function splitUrl(url: string): { origin: string; basePath: string } {
  const u = new URL(url);
  const basePath = u.pathname.replace(/\/+$/, "").replace(/\/v1$/, "");
  return { origin: u.origin, basePath };
}

function header(headers: Record<string, string | string[] | undefined>, name: string) {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

type HeaderOf = (name: string) => string | undefined;

/** The router marks a request cancelled for a higher class: `…_preempted` kinds. */
export const PREEMPTED_HEADER = "x-maitred-preempted";

/**
 * Error kind of a non-2xx answer, from the OpenAI envelope's `type` when it has one; a
 * preemption is `http_<status>_preempted`, so reports can tell it from the other 503s. A
 * preemption says so in header `x-maitred-preempted: true`, and in its envelope's code
 * `preempted`, which is all a held stream has (its head went out before).
 */
export function errorKind(status: number, body: unknown, header?: HeaderOf): string {
  const error = asObj(asObj(body)?.error);
  if (header?.(PREEMPTED_HEADER) === "true" || error?.code === "preempted") {
    return `http_${status}_preempted`;
  }
  const type = error?.type;
  return typeof type === "string" && /^[A-Za-z]+$/.test(type)
    ? `http_${status}_${type}`
    : `http_${status}`;
}

/**
 * A held stream's comment fields by the header a relayed answer carries them in: maitred sent
 * the head while the request was held, before it knew them (sse-completion.ts).
 */
const NOTE_FIELD_OF_HEADER: ReadonlyMap<string, string> = new Map([
  [PAUSED_MS_HEADER, "paused_ms"],
  ["retry-after", "retry_after"],
]);

function noteHeader(note: ReadonlyMap<string, string>, name: string): string | undefined {
  const field = NOTE_FIELD_OF_HEADER.get(name);
  return field === undefined ? undefined : note.get(field);
}

/** A non-2xx answer, from its status, body and headers (or a held stream's comment). */
function httpError(status: number, body: unknown, get: HeaderOf): StepResponse {
  return {
    ok: false,
    kind: errorKind(status, body, get),
    status,
    retryAfterMs: parseRetryAfter(get("retry-after")),
  };
}

/** A 2xx answer: a completion, or `bad_response` when it holds none. */
function completed(parsed: StreamedCompletion | null, get: HeaderOf): StepResponse {
  if (parsed === null) return { ok: false, kind: "bad_response", status: null, retryAfterMs: null };
  const paused = Number(get(PAUSED_MS_HEADER) ?? 0);
  return {
    ok: true,
    promptTokens: parsed.prompt,
    cachedTokens: parsed.cached,
    completionTokens: parsed.completion,
    pausedMs: Number.isFinite(paused) && paused > 0 ? paused : 0,
    text: parsed.text,
  };
}

export function createStepClient(options: StepClientOptions): StepClient {
  const { origin, basePath } = splitUrl(options.url);
  const pool = new Pool(origin, { connections: options.connections, pipelining: 1 });
  const baseHeaders = { "content-type": "application/json", ...options.headers };
  const api = options.api ?? "chat";

  async function post(path: string, payload: unknown, signal?: AbortSignal) {
    const res = await pool.request({
      method: "POST",
      path: `${basePath}${path}`,
      headers: baseHeaders,
      body: JSON.stringify(payload),
      signal,
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, body: parseJson(text) };
  }

  return {
    async send(req, signal) {
      try {
        const call = apiRequest(api, { ...req, stream: req.stream !== false });
        const res = await pool.request({
          method: "POST",
          path: `${basePath}${call.path}`,
          headers: { ...stepHeaders(baseHeaders, req), ...call.headers },
          body: JSON.stringify(call.body),
          signal,
        });
        const get = (name: string) => header(res.headers, name);
        if (res.statusCode < 200 || res.statusCode >= 300) {
          return httpError(res.statusCode, parseJson(await res.body.text()), get);
        }
        if (req.stream === false) {
          return completed(completionFromJson(parseJson(await res.body.text())), get);
        }
        const reader = createSseCompletionReader(() => req.onFirstToken?.());
        for await (const piece of res.body) reader.push(piece as Uint8Array);
        const note = reader.routerNote;
        const said = note === null ? get : (name: string) => get(name) ?? noteHeader(note, name);
        if (reader.error !== undefined) {
          // Held by maitred, the answer is a 200 whatever happened; its comment has the status.
          const status = Number(note?.get("status"));
          return Number.isInteger(status) && status >= 300
            ? httpError(status, reader.error, said)
            : { ok: false, kind: "stream_error", status: null, retryAfterMs: null };
        }
        return completed(reader.result(), said);
      } catch (err) {
        if (signal.aborted) throw err;
        const code = (err as { code?: unknown }).code;
        const kind = typeof code === "string" ? code : (err as Error).name;
        return { ok: false, kind: `transport_${kind}`, status: null, retryAfterMs: null };
      }
    },
    async release(programId) {
      try {
        await post("/programs/release", { program_id: programId });
        return true;
      } catch {
        // Best effort: the program's idle timeout on the router cleans up the rest.
        return false;
      }
    },
    close: () => pool.close(),
  };
}

/**
 * The step's headers: its class, its parent if it is a sub-agent, and how its answer should end
 * on a simulated backend.
 */
function stepHeaders(base: Record<string, string>, req: StepRequest): Record<string, string> {
  if (
    req.priorityClass === undefined &&
    req.parentProgramId === undefined &&
    req.answerStops !== true
  ) {
    return base;
  }
  const out = { ...base };
  if (req.priorityClass !== undefined) out[PRIORITY_HEADER] = req.priorityClass;
  if (req.parentProgramId !== undefined) out[PARENT_HEADER] = req.parentProgramId;
  if (req.answerStops === true) out["x-sim-finish"] = "stop";
  return out;
}
