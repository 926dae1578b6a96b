import { Pool } from "undici";
import type { ChatMessage } from "../engine/chat-template.ts";
import { asObj } from "../util/json-object.ts";
import { parseRetryAfter } from "./retry-policy.ts";
import {
  completionFromJson,
  createSseCompletionReader,
  type StreamedCompletion,
} from "./sse-completion.ts";

/**
 * The bench's HTTP side: one chat completion per agent step against any OpenAI-compatible
 * URL (maitred, a bare vLLM/SGLang or the simulated backend, another router), over one undici
 * keep-alive pool, plus the program release call. Completions are streamed with usage
 * (sse-completion.ts) so the first token's arrival is seen; the program's class goes as header
 * `x-priority`. The driver (closed-loop.ts) only sees the `StepClient` interface, so it can
 * run against a fake in tests.
 */

export interface StepRequest {
  programId: string;
  model: string;
  messages: ChatMessage[];
  /** Exact output length: sent as `max_tokens` with `ignore_eos`. */
  maxTokens: number;
  /** Sent as header `x-priority`; absent = no header (the router's `default`). */
  priorityClass?: string;
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
      /** `http_<status>` (+ `_<error type>`), or `transport_<code>`, or `bad_response`. */
      kind: string;
      status: number | null;
      /** `Retry-After` in ms, when the server sent one. */
      retryAfterMs: number | null;
    };

export interface StepClient {
  send(request: StepRequest, signal: AbortSignal): Promise<StepResponse>;
  /** `POST /programs/release`; a 404 (a bare backend) and transport errors are ignored. */
  release(programId: string): Promise<void>;
  close(): Promise<void>;
}

export interface StepClientOptions {
  /** Base URL; a trailing `/v1` is accepted and stripped. */
  url: string;
  /** Keep-alive connections (one per concurrent program is enough). */
  connections: number;
  headers?: Record<string, string>;
}

/** Router header: how long maitred held the request before forwarding it. */
export const PAUSED_MS_HEADER = "x-maitred-paused-ms";
/** The class header maitred reads. */
export const PRIORITY_HEADER = "x-priority";

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

/** The router marks a request cancelled for a higher class: `…_preempted` kinds. */
export const PREEMPTED_HEADER = "x-maitred-preempted";

/**
 * Error kind of a non-2xx answer, from the OpenAI envelope's `type` when it has one; a
 * preemption (header `x-maitred-preempted: true`) is `http_<status>_preempted`, so reports can
 * tell it from the other 503s.
 */
export function errorKind(
  status: number,
  body: unknown,
  header?: (name: string) => string | undefined,
): string {
  if (header?.(PREEMPTED_HEADER) === "true") return `http_${status}_preempted`;
  const type = asObj(asObj(body)?.error)?.type;
  return typeof type === "string" && /^[A-Za-z]+$/.test(type)
    ? `http_${status}_${type}`
    : `http_${status}`;
}

export function createStepClient(options: StepClientOptions): StepClient {
  const { origin, basePath } = splitUrl(options.url);
  const pool = new Pool(origin, { connections: options.connections, pipelining: 1 });
  const baseHeaders = { "content-type": "application/json", ...options.headers };

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
        const res = await pool.request({
          method: "POST",
          path: `${basePath}/v1/chat/completions`,
          headers:
            req.priorityClass === undefined
              ? baseHeaders
              : { ...baseHeaders, [PRIORITY_HEADER]: req.priorityClass },
          body: JSON.stringify({
            model: req.model,
            messages: req.messages,
            max_tokens: req.maxTokens,
            ignore_eos: true,
            temperature: 0,
            ...(req.stream === false
              ? { stream: false }
              : { stream: true, stream_options: { include_usage: true } }),
            program_id: req.programId,
          }),
          signal,
        });
        const get = (name: string) => header(res.headers, name);
        if (res.statusCode < 200 || res.statusCode >= 300) {
          const body = parseJson(await res.body.text());
          return {
            ok: false,
            kind: errorKind(res.statusCode, body, get),
            status: res.statusCode,
            retryAfterMs: parseRetryAfter(get("retry-after")),
          };
        }
        let parsed: StreamedCompletion | null;
        let failed = false;
        if (req.stream === false) {
          parsed = completionFromJson(parseJson(await res.body.text()));
        } else {
          const reader = createSseCompletionReader(() => req.onFirstToken?.());
          for await (const piece of res.body) reader.push(piece as Uint8Array);
          failed = reader.failed;
          parsed = failed ? null : reader.result();
        }
        if (!parsed) {
          const kind = failed ? "stream_error" : "bad_response";
          return { ok: false, kind, status: null, retryAfterMs: null };
        }
        const paused = Number(get(PAUSED_MS_HEADER) ?? 0);
        return {
          ok: true,
          promptTokens: parsed.prompt,
          cachedTokens: parsed.cached,
          completionTokens: parsed.completion,
          pausedMs: Number.isFinite(paused) && paused > 0 ? paused : 0,
          text: parsed.text,
        };
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
      } catch {
        // Best effort: the program's idle timeout on the router cleans up the rest.
      }
    },
    close: () => pool.close(),
  };
}
