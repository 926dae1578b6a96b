/**
 * A stand-in for vLLM's OpenAI server, light enough that the proxy benchmark measures maitred
 * rather than it, but writing what vLLM writes the way vLLM writes it:
 *
 *   - a streamed chat completion is one SSE event per engine step (so are the Anthropic
 *     Messages and the OpenAI Responses streams, `/v1/messages` and `/v1/responses`, with the
 *     events vLLM writes before and after the tokens in those APIs), each event its own
 *     `res.write`: the role event and the first token, then one token per step, the last
 *     token with its `finish_reason`, then (when `stream_options.include_usage` is asked, as
 *     maitred always asks) a usage event with no choices, then `data: [DONE]`. A router in
 *     front pays for every one of those events as it arrives, which an upstream that writes a
 *     whole stream at once hides;
 *   - the events have every field vLLM puts in them, in its order: a chunk lists the fields
 *     vLLM sets, nulls included (`logprobs`, `finish_reason`, `token_ids`, and
 *     `stop_reason` beside a finish reason), and no `system_fingerprint`, which vLLM's chunks
 *     do not carry; the usage event lists no nulls;
 *   - a plain request waits as many steps as it has tokens and is answered in one JSON body
 *     with every field of vLLM's plain answer, nulls included;
 *   - `/v1/models` and a `/metrics` with the gauges maitred reads (a KV cache far larger than
 *     the load, so the scheduler never has to hold anything back).
 *
 * Engine steps: all running requests advance one token per step, as a batch in vLLM does. The
 * step interval is `intervalMs`: 0 (the default) steps as fast as the event loop turns
 * (`setImmediate`), so every event is still its own write but none waits; 20 is a decode step
 * of a busy 8B model (50 tokens/s per request). A request whose client reads too slowly waits
 * for it (its socket's drain) before its next step.
 *
 * `writes: "one"` writes each whole stream in one write after its last step instead: the same
 * bytes, batched, to show what one write per event costs.
 *
 * Every request is answered with `max_completion_tokens` (else `max_tokens`, else 16) tokens
 * and `finish_reason: "length"`: a benchmark needs the length it asked for.
 *
 * Its entry, scripts/vllm-like-upstream.ts, runs it on its own or as the proxy benchmark's child
 * process (`forkVllmLike` in proxy-bench-kit.ts).
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface VllmLikeOptions {
  host?: string;
  port?: number;
  /** Served model name, echoed in every answer as vLLM does. */
  model?: string;
  /** Time between engine steps; 0 = every turn of the event loop. */
  intervalMs?: number;
  /** One write per SSE event (vLLM), or the whole stream in one write. */
  writes?: "per-event" | "one";
}

/** What the upstream wrote since it started. */
export interface UpstreamStats {
  /** Chat completions (or Messages, Responses) answered, plain or streamed. */
  requests: number;
  /** SSE events written: role, tokens, usage and `[DONE]` each count one. */
  events: number;
  /** Body writes (`res.write` / `res.end` with data) on chat completions. */
  writes: number;
}

export interface VllmLikeUpstream {
  url: string;
  stats(): UpstreamStats;
  close(): Promise<void>;
}

export const DEFAULT_MODEL = "meta-llama/Llama-3.1-8B-Instruct";
const DEFAULT_MAX_TOKENS = 16;

/** A few short tokens, JSON-escaped once: the text of token `i` is `TOKENS[i % n]`. */
const TOKEN_TEXTS = [" the", " file", " reads", ",", " and", " then", " calls", " grep", "."];
const TOKENS = TOKEN_TEXTS.map((t) => JSON.stringify(t));

/** The text of an answer of `n` tokens (what a rebuilt plain answer must say). */
export function answerText(n: number): string {
  let s = "";
  for (let i = 0; i < n; i++) s += TOKEN_TEXTS[i % TOKEN_TEXTS.length];
  return s;
}

/** Prompt tokens: roughly four bytes of request body per token, as for English text. */
const promptTokensOf = (bodyBytes: number) => Math.max(1, Math.round(bodyBytes / 4));

/** The API of a request: chat completions, Anthropic Messages or OpenAI Responses. */
export type Api = "chat" | "messages" | "responses";

export const API_PATHS: Record<Api, string> = {
  chat: "/v1/chat/completions",
  messages: "/v1/messages",
  responses: "/v1/responses",
};

export interface ChatRequest {
  api: Api;
  tokens: number;
  stream: boolean;
  includeUsage: boolean;
  promptTokens: number;
}

function parseChatRequest(raw: Buffer, api: Api): ChatRequest {
  const body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
  const max = body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens;
  const tokens = typeof max === "number" && max >= 1 ? Math.floor(max) : DEFAULT_MAX_TOKENS;
  const so = body.stream_options as Record<string, unknown> | null | undefined;
  // vLLM: usage is sent when stream_options is given and its include_usage is not false
  // (the field defaults to true).
  const includeUsage =
    typeof so === "object" && so !== null && (so.include_usage ?? true) !== false;
  return {
    api,
    tokens,
    stream: body.stream === true,
    // The agent APIs' streams always carry their usage.
    includeUsage: api !== "chat" || includeUsage,
    promptTokens: promptTokensOf(raw.length),
  };
}

/** The SSE events of one streamed answer, built lazily one at a time. */
export interface AnswerEvents {
  readonly total: number;
  /** Events before the first token's (written with it, at the first step). */
  readonly lead: number;
  event(k: number): string;
}

/**
 * An Anthropic Messages stream as vLLM writes it: `message_start`, `content_block_start`, one
 * `content_block_delta` per token, `content_block_stop`, `message_delta` (stop reason and
 * usage), `message_stop`.
 */
class MessagesEvents implements AnswerEvents {
  readonly total: number;
  readonly lead = 2;
  private readonly id: string;
  private readonly model: string;
  private readonly req: ChatRequest;

  constructor(id: string, model: string, req: ChatRequest) {
    this.id = id;
    this.model = model;
    this.req = req;
    this.total = req.tokens + 5;
  }

  event(k: number): string {
    const n = this.req.tokens;
    const p = this.req.promptTokens;
    if (k === 0)
      return `event: message_start\ndata: {"type":"message_start","message":{"id":"${this.id}","type":"message","role":"assistant","content":[],"model":${JSON.stringify(this.model)},"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":${p},"output_tokens":0}}}\n\n`;
    if (k === 1)
      return 'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n';
    if (k < n + 2)
      return `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${TOKENS[(k - 2) % TOKENS.length]}}}\n\n`;
    if (k === n + 2)
      return 'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n';
    if (k === n + 3)
      return `event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"input_tokens":${p},"output_tokens":${n}}}\n\n`;
    return 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
  }
}

/**
 * An OpenAI Responses stream as vLLM writes it: `response.created`, `response.in_progress`,
 * `response.output_item.added`, `response.content_part.added`, one
 * `response.output_text.delta` per token, then `response.output_text.done`,
 * `response.content_part.done`, `response.output_item.done` (each with the whole text) and
 * `response.completed` (the whole response with its usage).
 */
class ResponsesEvents implements AnswerEvents {
  readonly total: number;
  readonly lead = 4;
  private readonly req: ChatRequest;
  private readonly response: (status: string, output: string, usage: string) => string;
  private readonly item: string;

  constructor(id: string, created: number, model: string, req: ChatRequest) {
    this.req = req;
    this.total = req.tokens + 8;
    this.item = `msg_${id}`;
    this.response = (status, output, usage) =>
      `{"id":"resp_${id}","object":"response","created_at":${created},"status":"${status}","model":${JSON.stringify(model)},"output":${output},"usage":${usage}}`;
  }

  private named(type: string, k: number, rest: string): string {
    return `event: ${type}\ndata: {"type":"${type}","sequence_number":${k},${rest}}\n\n`;
  }

  event(k: number): string {
    const n = this.req.tokens;
    const item = this.item;
    const text = () => JSON.stringify(answerText(n));
    const message = (status: string, content: string) =>
      `{"id":"${item}","type":"message","status":"${status}","role":"assistant","content":${content}}`;
    const part = () => `{"type":"output_text","text":${text()},"annotations":[]}`;
    if (k === 0)
      return this.named(
        "response.created",
        k,
        `"response":${this.response("in_progress", "[]", "null")}`,
      );
    if (k === 1)
      return this.named(
        "response.in_progress",
        k,
        `"response":${this.response("in_progress", "[]", "null")}`,
      );
    if (k === 2)
      return this.named(
        "response.output_item.added",
        k,
        `"output_index":0,"item":${message("in_progress", "[]")}`,
      );
    if (k === 3)
      return this.named(
        "response.content_part.added",
        k,
        `"output_index":0,"item_id":"${item}","content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`,
      );
    if (k < n + 4)
      return this.named(
        "response.output_text.delta",
        k,
        `"output_index":0,"item_id":"${item}","content_index":0,"delta":${TOKENS[(k - 4) % TOKENS.length]},"logprobs":[]`,
      );
    if (k === n + 4)
      return this.named(
        "response.output_text.done",
        k,
        `"output_index":0,"item_id":"${item}","content_index":0,"text":${text()},"logprobs":[]`,
      );
    if (k === n + 5)
      return this.named(
        "response.content_part.done",
        k,
        `"output_index":0,"item_id":"${item}","content_index":0,"part":${part()}`,
      );
    if (k === n + 6)
      return this.named(
        "response.output_item.done",
        k,
        `"output_index":0,"item":${message("completed", `[${part()}]`)}`,
      );
    const p = this.req.promptTokens;
    const usage = `{"input_tokens":${p},"input_tokens_details":{"cached_tokens":0},"output_tokens":${n},"output_tokens_details":{"reasoning_tokens":0},"total_tokens":${p + n}}`;
    return this.named(
      "response.completed",
      k,
      `"response":${this.response("incomplete", `[${message("completed", `[${part()}]`)}]`, usage)}`,
    );
  }
}

/**
 * The SSE events of one streamed answer, built lazily one at a time: event 0 is the role
 * event, events 1..n the tokens (the last with its finish reason), then usage if asked, then
 * `[DONE]`.
 */
export class StreamEvents implements AnswerEvents {
  readonly total: number;
  readonly lead = 1;
  private readonly head: string;
  private readonly req: ChatRequest;

  constructor(id: string, created: number, model: string, req: ChatRequest) {
    this.req = req;
    this.head = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"choices":`;
    this.total = req.tokens + (req.includeUsage ? 3 : 2);
  }

  event(k: number): string {
    const n = this.req.tokens;
    if (k === 0) {
      return `${this.head}[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"prompt_token_ids":null}\n\n`;
    }
    if (k < n) {
      return `${this.head}[{"index":0,"delta":{"content":${TOKENS[(k - 1) % TOKENS.length]}},"logprobs":null,"finish_reason":null,"token_ids":null}]}\n\n`;
    }
    if (k === n) {
      return `${this.head}[{"index":0,"delta":{"content":${TOKENS[(k - 1) % TOKENS.length]}},"logprobs":null,"finish_reason":"length","stop_reason":null,"token_ids":null}]}\n\n`;
    }
    if (k === n + 1 && this.req.includeUsage) {
      const p = this.req.promptTokens;
      return `${this.head}[],"usage":{"prompt_tokens":${p},"total_tokens":${p + n},"completion_tokens":${n}}}\n\n`;
    }
    return "data: [DONE]\n\n";
  }
}

/** The events of one streamed answer in the request's API. */
export function answerEvents(
  id: string,
  created: number,
  model: string,
  req: ChatRequest,
): AnswerEvents {
  if (req.api === "messages") return new MessagesEvents(id, model, req);
  if (req.api === "responses") return new ResponsesEvents(id, created, model, req);
  return new StreamEvents(id, created, model, req);
}

/** vLLM's plain answer (every field, nulls included, in its order), in the request's API. */
function plainAnswer(id: string, created: number, model: string, req: ChatRequest): string {
  const p = req.promptTokens;
  const n = req.tokens;
  if (req.api === "messages")
    return JSON.stringify({
      id,
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: answerText(n) }],
      model,
      stop_reason: "max_tokens",
      usage: { input_tokens: p, output_tokens: n },
    });
  if (req.api === "responses")
    return JSON.stringify({
      id: `resp_${id}`,
      object: "response",
      created_at: created,
      status: "incomplete",
      model,
      output: [
        {
          id: `msg_${id}`,
          type: "message",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: answerText(n), annotations: [] }],
        },
      ],
      usage: { input_tokens: p, output_tokens: n, total_tokens: p + n },
    });
  return JSON.stringify({
    id,
    object: "chat.completion",
    created,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: answerText(n),
          refusal: null,
          annotations: null,
          audio: null,
          function_call: null,
          tool_calls: [],
          reasoning: null,
        },
        logprobs: null,
        finish_reason: "length",
        stop_reason: null,
        token_ids: null,
      },
    ],
    service_tier: null,
    system_fingerprint: null,
    usage: {
      prompt_tokens: p,
      total_tokens: p + n,
      completion_tokens: n,
      prompt_tokens_details: null,
    },
    prompt_logprobs: null,
    prompt_token_ids: null,
    kv_transfer_params: null,
  });
}

/** One running request: `advance()` runs its next engine step; true once it has answered. */
interface Job {
  advance(): boolean;
  /** Waiting for its client to read (its socket's drain). */
  blocked: boolean;
}

export function startVllmLikeUpstream(options: VllmLikeOptions = {}): Promise<VllmLikeUpstream> {
  const model = options.model ?? DEFAULT_MODEL;
  const intervalMs = options.intervalMs ?? 0;
  const oneWrite = options.writes === "one";
  const stats: UpstreamStats = { requests: 0, events: 0, writes: 0 };
  const created = () => Math.floor(Date.now() / 1000);
  const startedAt = created();

  // ─── engine steps ────────────────────────────────────────────────────────────────────────
  const running = new Set<Job>();
  let scheduled = false;
  /** When the next paced step is due (intervalMs > 0), so timer lateness does not add up. */
  let nextStepAt = 0;
  const step = () => {
    scheduled = false;
    for (const job of running) if (!job.blocked && job.advance()) running.delete(job);
    schedule();
  };
  const schedule = () => {
    if (scheduled || running.size === 0) return;
    scheduled = true;
    if (intervalMs <= 0) {
      setImmediate(step);
      return;
    }
    const now = performance.now();
    nextStepAt = Math.max(nextStepAt + intervalMs, now);
    setTimeout(step, nextStepAt - now);
  };
  const run = (job: Job, res: ServerResponse) => {
    running.add(job);
    res.once("close", () => running.delete(job)); // a client gone stops its request
    schedule();
  };

  const streamed = (req: ChatRequest, res: ServerResponse) => {
    const id = `chatcmpl-${randomUUID().replaceAll("-", "")}`;
    const events = answerEvents(id, created(), model, req);
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
    let k = 0;
    let steps = 0;
    const job: Job = {
      blocked: false,
      advance() {
        steps++;
        if (oneWrite) {
          if (steps < req.tokens) return false;
          let all = "";
          for (; k < events.total; k++) all += events.event(k);
          stats.events += events.total;
          stats.writes++;
          res.end(all);
          return true;
        }
        // Step 1 writes the events before the first token (chat's role event) and the first
        // token; each later step one token; the last also the closing events (chat's usage and
        // [DONE]), which vLLM yields right after its last token.
        const until = steps === req.tokens ? events.total : steps + events.lead;
        let ok = true;
        for (; k < until; k++) {
          ok = res.write(events.event(k));
          stats.events++;
          stats.writes++;
        }
        if (k === events.total) {
          res.end();
          return true;
        }
        if (!ok) {
          job.blocked = true;
          res.once("drain", () => {
            job.blocked = false;
            schedule();
          });
        }
        return false;
      },
    };
    run(job, res);
  };

  const plain = (req: ChatRequest, res: ServerResponse) => {
    let steps = 0;
    run(
      {
        blocked: false,
        advance() {
          if (++steps < req.tokens) return false;
          const body = plainAnswer(
            `chatcmpl-${randomUUID().replaceAll("-", "")}`,
            created(),
            model,
            req,
          );
          res.writeHead(200, {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
          });
          stats.writes++;
          res.end(body);
          return true;
        },
      },
      res,
    );
  };

  // ─── routes ──────────────────────────────────────────────────────────────────────────────
  const modelList = JSON.stringify({
    object: "list",
    data: [
      {
        id: model,
        object: "model",
        created: startedAt,
        owned_by: "vllm",
        root: model,
        parent: null,
        max_model_len: 131072,
        permission: [],
      },
    ],
  });
  const metrics = () => {
    const labels = `engine="0",model_name="${model}"`;
    return [
      "# TYPE vllm:num_requests_running gauge",
      `vllm:num_requests_running{${labels}} ${running.size}`,
      "# TYPE vllm:num_requests_waiting gauge",
      `vllm:num_requests_waiting{${labels}} 0`,
      "# TYPE vllm:kv_cache_usage_perc gauge",
      `vllm:kv_cache_usage_perc{${labels}} 0`,
      "# TYPE vllm:cache_config_info gauge",
      `vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="10000000"} 1.0`,
      "",
    ].join("\n");
  };
  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
    res.end(body);
  };

  const server: Server = createServer((request: IncomingMessage, res: ServerResponse) => {
    const path = request.url ?? "/";
    if (request.method === "GET" && path === "/v1/models") {
      return send(res, 200, "application/json", modelList);
    }
    if (request.method === "GET" && path === "/metrics") {
      return send(res, 200, "text/plain; version=0.0.4; charset=utf-8", metrics());
    }
    if (request.method === "GET" && path === "/health") return send(res, 200, "text/plain", "");
    const api = (Object.keys(API_PATHS) as Api[]).find((a) => API_PATHS[a] === path.split("?")[0]);
    if (request.method !== "POST" || api === undefined) {
      return send(res, 404, "application/json", '{"detail":"Not Found"}');
    }
    const parts: Buffer[] = [];
    request.on("data", (d: Buffer) => parts.push(d));
    request.on("end", () => {
      let req: ChatRequest;
      try {
        req = parseChatRequest(parts.length === 1 ? parts[0] : Buffer.concat(parts), api);
      } catch {
        return send(
          res,
          400,
          "application/json",
          '{"error":{"message":"invalid JSON body","type":"BadRequestError","param":null,"code":400}}',
        );
      }
      stats.requests++;
      if (req.stream) streamed(req, res);
      else plain(req, res);
    });
  });
  // Clients keep their connections between requests, as a router's pool does.
  server.keepAliveTimeout = 60_000;

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://${options.host ?? "127.0.0.1"}:${port}`,
        stats: () => ({ ...stats }),
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
