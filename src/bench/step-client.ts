import { Pool } from "undici";
import type { ChatMessage } from "../engine/chat-template.ts";

/**
 * The bench's HTTP side: one chat completion per agent step against any OpenAI-compatible
 * URL (maitred, a bare vLLM/SGLang or the simulated backend, another router), over one undici
 * keep-alive pool, plus the program release call. The driver (closed-loop.ts) only sees the
 * `StepClient` interface, so it can run against a fake in tests.
 */

export interface StepRequest {
  programId: string;
  model: string;
  messages: ChatMessage[];
  /** Exact output length: sent as `max_tokens` with `ignore_eos` (agent-workloads.md §4). */
  maxTokens: number;
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
const MS_PER_S = 1000;

function splitUrl(url: string): { origin: string; basePath: string } {
  const u = new URL(url);
  const basePath = u.pathname.replace(/\/+$/, "").replace(/\/v1$/, "");
  return { origin: u.origin, basePath };
}

function header(headers: Record<string, string | string[] | undefined>, name: string) {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function retryAfterMs(value: string | undefined): number | null {
  if (value === undefined) return null;
  const s = Number(value);
  return Number.isFinite(s) && s >= 0 ? s * MS_PER_S : null;
}

type Json = Record<string, unknown>;
const asObj = (v: unknown): Json | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : undefined;

/** Pull usage and text out of a chat completion; null when the body is not one. */
export function parseCompletion(
  body: unknown,
): { prompt: number; cached: number | null; completion: number; text: string | undefined } | null {
  const usage = asObj(asObj(body)?.usage);
  if (!usage || typeof usage.prompt_tokens !== "number") return null;
  const details = asObj(usage.prompt_tokens_details);
  const cached = typeof details?.cached_tokens === "number" ? details.cached_tokens : null;
  const choice = asObj((asObj(body)?.choices as unknown[] | undefined)?.[0]);
  const content = asObj(choice?.message)?.content;
  return {
    prompt: usage.prompt_tokens,
    cached,
    completion: typeof usage.completion_tokens === "number" ? usage.completion_tokens : 0,
    text: typeof content === "string" ? content : undefined,
  };
}

/** Error kind of a non-2xx answer, from the OpenAI envelope's `type` when it has one. */
export function errorKind(status: number, body: unknown): string {
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
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.statusCode, headers: res.headers, body };
  }

  return {
    async send(req, signal) {
      try {
        const res = await post(
          "/v1/chat/completions",
          {
            model: req.model,
            messages: req.messages,
            max_tokens: req.maxTokens,
            ignore_eos: true,
            temperature: 0,
            stream: false,
            program_id: req.programId,
          },
          signal,
        );
        if (res.status < 200 || res.status >= 300) {
          return {
            ok: false,
            kind: errorKind(res.status, res.body),
            status: res.status,
            retryAfterMs: retryAfterMs(header(res.headers, "retry-after")),
          };
        }
        const parsed = parseCompletion(res.body);
        if (!parsed)
          return { ok: false, kind: "bad_response", status: res.status, retryAfterMs: null };
        const paused = Number(header(res.headers, PAUSED_MS_HEADER) ?? 0);
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
