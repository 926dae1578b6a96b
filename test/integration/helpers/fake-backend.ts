/**
 * A tiny OpenAI-compatible upstream for proxy tests: it records what it received and answers
 * with vLLM's shapes. A stream can be held open after some
 * chunks (disconnect tests; a request with header `x-fake-no-hold` is never held), or, for a
 * request with header `x-fake-hold-first`, after its head and before any chunk (preemption
 * tests). A streamed answer ends in a tool call for a request with header `x-fake-tool-call`, with
 * `finish_reason: "stop"` and text otherwise. A request with header `x-fake-status` is answered that status and an error envelope,
 * or the body in header `x-fake-error-body`; /metrics reports the configured KV capacity, which a test may change (a backend
 * that reports none cannot be placed on, so the router holds what arrives until it does).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

export interface FakeBackendOptions {
  models?: string[];
  /** KV capacity reported by /metrics as block_size 16 × num_gpu_blocks; 0 = not reported. */
  numGpuBlocks?: number;
  /** Content chunks per stream / completion tokens per answer. */
  tokens?: number;
  promptTokens?: number;
  /** Hold streams open after this many content chunks until `release()`. */
  holdAfter?: number | null;
  /** A held stream dies on `release()`: its socket is destroyed (an engine that crashed). */
  dieMidStream?: boolean;
  /** Streams end at once with `data: [DONE]`: a whole answer with nothing in it. */
  emptyStreams?: boolean;
  /** Extra headers on every completion answer. */
  responseHeaders?: Record<string, string>;
}

export interface FakeBackend {
  url: string;
  received: Received[];
  /** Resolves when a held stream's connection closed (the router aborted it). */
  streamClosed(): Promise<void>;
  /** Resolves once a stream reached its hold point. */
  held(): Promise<void>;
  release(): void;
  /** While frozen, /metrics requests are read and never answered (an engine that hangs). */
  freezeMetrics(frozen: boolean): void;
  /** What /metrics reports from now on as num_gpu_blocks (0 = no capacity). */
  setNumGpuBlocks(blocks: number): void;
  close(): Promise<void>;
}

const chunkOf = (id: string, delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;

function signal() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export async function startFakeBackend(options: FakeBackendOptions = {}): Promise<FakeBackend> {
  const models = options.models ?? ["m"];
  const tokens = options.tokens ?? 5;
  const prompt = options.promptTokens ?? 10;
  const received: Received[] = [];
  let metricsFrozen = false;
  let numGpuBlocks = options.numGpuBlocks ?? 4096;
  let closed = signal();
  let heldSignal = signal();
  let releaseSignal = signal();
  const usage = { prompt_tokens: prompt, total_tokens: prompt + tokens, completion_tokens: tokens };

  async function completion(
    req: IncomingMessage,
    res: ServerResponse,
    body: Record<string, unknown>,
  ) {
    const status = Number(req.headers["x-fake-status"] ?? 200);
    if (status !== 200) {
      // `x-fake-error-body` is the body to answer with instead of the envelope (another shape).
      const own = req.headers["x-fake-error-body"];
      res.writeHead(status, { "content-type": "application/json" });
      res.end(
        typeof own === "string"
          ? own
          : JSON.stringify({
              error: { message: "fake failure", type: "X", param: null, code: status },
            }),
      );
      return;
    }
    if (body.stream !== true) {
      res.writeHead(200, {
        "content-type": "application/json",
        "x-upstream": "fake",
        ...options.responseHeaders,
      });
      if (req.headers["x-fake-hold-first"] !== undefined) {
        // Head sent, no body yet: the answer is still being generated.
        res.on("close", () => closed.resolve());
        res.flushHeaders();
        heldSignal.resolve();
        await releaseSignal.promise;
        if (res.destroyed) return;
      }
      res.end(
        JSON.stringify({
          id: "cmpl-1",
          object: "chat.completion",
          choices: [
            {
              index: 0,
              message: { role: "assistant", content: "x".repeat(tokens) },
              finish_reason: "stop",
            },
          ],
          usage,
        }),
      );
      return;
    }
    // `x-fake-tool-call`: the answer ends in a tool call, as an agent's step does.
    const toolCall = req.headers["x-fake-tool-call"] !== undefined;
    res.on("close", () => closed.resolve());
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "x-upstream": "fake",
      ...options.responseHeaders,
    });
    if (req.headers["x-fake-hold-first"] !== undefined) {
      // Head sent, no chunk yet: the engine is still prefilling (a request before its first byte).
      res.flushHeaders();
      heldSignal.resolve();
      await releaseSignal.promise;
      if (res.destroyed) return;
    }
    if (options.emptyStreams) {
      res.end("data: [DONE]\n\n");
      return;
    }
    res.write(chunkOf("c1", { role: "assistant", content: "" }));
    for (let i = 1; i <= tokens; i++) {
      const holds = options.holdAfter != null && req.headers["x-fake-no-hold"] === undefined;
      if (holds && i === (options.holdAfter as number) + 1) {
        heldSignal.resolve();
        await releaseSignal.promise;
        if (options.dieMidStream) res.socket?.destroy();
        if (res.destroyed) return;
      }
      res.write(chunkOf("c1", { content: `t${i}` }, i === tokens && !toolCall ? "stop" : null));
    }
    if (toolCall) {
      const call = {
        index: 0,
        id: "call-1",
        type: "function",
        function: { name: "bash", arguments: "{}" },
      };
      res.write(chunkOf("c1", { tool_calls: [call] }, "tool_calls"));
    }
    const so = body.stream_options as { include_usage?: boolean } | undefined;
    if (so?.include_usage)
      res.write(
        `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [], usage })}\n\n`,
      );
    res.end("data: [DONE]\n\n");
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      const text = Buffer.concat(chunks).toString();
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      received.push({ path, headers: req.headers, body });
      if (
        req.method === "POST" &&
        (path === "/v1/chat/completions" || path === "/v1/completions")
      ) {
        void completion(req, res, body);
      } else if (path === "/metrics" && metricsFrozen) {
        // Never answered: the router's poll must give up on its own.
      } else if (path === "/metrics") {
        res.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
        const blocks = numGpuBlocks;
        res.end(
          (blocks > 0
            ? `vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="${blocks}"} 1.0\n`
            : "") +
            'vllm:num_requests_running{engine="0",model_name="m"} 0.0\nvllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.0\n',
        );
      } else if (path === "/v1/models") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            object: "list",
            data: models.map((id) => ({ id, object: "model", owned_by: "fake" })),
          }),
        );
      } else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    streamClosed: () => closed.promise,
    held: () => heldSignal.promise,
    release() {
      releaseSignal.resolve();
      releaseSignal = signal();
      heldSignal = signal();
      closed = signal();
    },
    freezeMetrics(frozen) {
      metricsFrozen = frozen;
    },
    setNumGpuBlocks(blocks) {
      numGpuBlocks = blocks;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
