/**
 * A stand-in for vLLM's OpenAI server, light enough that the proxy benchmark measures maitred
 * rather than it, but writing what vLLM writes the way vLLM writes it (answer-events.ts):
 *
 *   - a streamed answer is one SSE event per engine step (engine-steps.ts), each event its own
 *     `res.write`: the events before the first token with the first token, then one token per
 *     step, the last token with the closing events. A router in front pays for every one of
 *     those events as it arrives, which an upstream that writes a whole stream at once hides;
 *   - a plain request waits as many steps as it has tokens and is answered in one JSON body;
 *   - `/v1/models` and a `/metrics` with the gauges maitred reads (a KV cache far larger than
 *     the load, so the scheduler never has to hold anything back).
 *
 * `writes: "one"` writes each whole stream in one write after its last step instead: the same
 * bytes, batched, to show what one write per event costs.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { answerEvents, plainAnswer } from "./answer-events.ts";
import { type EngineSteps, engineSteps, type Job } from "./engine-steps.ts";
import {
  apiOfPath,
  type ChatRequest,
  DEFAULT_MODEL,
  parseChatRequest,
} from "./upstream-request.ts";

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

const newId = () => `chatcmpl-${randomUUID().replaceAll("-", "")}`;
const created = () => Math.floor(Date.now() / 1000);

/** How one request is answered: its job, stepped by the engine. */
interface Answering {
  steps: EngineSteps;
  model: string;
  oneWrite: boolean;
  stats: UpstreamStats;
}

function streamed(a: Answering, req: ChatRequest, res: ServerResponse): void {
  const events = answerEvents(newId(), created(), a.model, req);
  const { stats } = a;
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
  let k = 0;
  let steps = 0;
  const job: Job = {
    blocked: false,
    advance() {
      steps++;
      if (a.oneWrite) {
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
      if (!ok) a.steps.waitForDrain(job, res);
      return false;
    },
  };
  a.steps.run(job, res);
}

function plain(a: Answering, req: ChatRequest, res: ServerResponse): void {
  let steps = 0;
  const job: Job = {
    blocked: false,
    advance() {
      if (++steps < req.tokens) return false;
      const body = plainAnswer(newId(), created(), a.model, req);
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      });
      a.stats.writes++;
      res.end(body);
      return true;
    },
  };
  a.steps.run(job, res);
}

function modelList(model: string, startedAt: number): string {
  return JSON.stringify({
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
}

function metricsText(model: string, running: number): string {
  const labels = `engine="0",model_name="${model}"`;
  return [
    "# TYPE vllm:num_requests_running gauge",
    `vllm:num_requests_running{${labels}} ${running}`,
    "# TYPE vllm:num_requests_waiting gauge",
    `vllm:num_requests_waiting{${labels}} 0`,
    "# TYPE vllm:kv_cache_usage_perc gauge",
    `vllm:kv_cache_usage_perc{${labels}} 0`,
    "# TYPE vllm:cache_config_info gauge",
    `vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="10000000"} 1.0`,
    "",
  ].join("\n");
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

const BAD_JSON =
  '{"error":{"message":"invalid JSON body","type":"BadRequestError","param":null,"code":400}}';

export function startVllmLikeUpstream(options: VllmLikeOptions = {}): Promise<VllmLikeUpstream> {
  const model = options.model ?? DEFAULT_MODEL;
  const stats: UpstreamStats = { requests: 0, events: 0, writes: 0 };
  const a: Answering = {
    steps: engineSteps(options.intervalMs ?? 0),
    model,
    oneWrite: options.writes === "one",
    stats,
  };
  const models = modelList(model, created());

  const server: Server = createServer((request: IncomingMessage, res: ServerResponse) => {
    const path = request.url ?? "/";
    if (request.method === "GET" && path === "/v1/models") {
      return send(res, 200, "application/json", models);
    }
    if (request.method === "GET" && path === "/metrics") {
      const text = metricsText(model, a.steps.running());
      return send(res, 200, "text/plain; version=0.0.4; charset=utf-8", text);
    }
    if (request.method === "GET" && path === "/health") return send(res, 200, "text/plain", "");
    const api = apiOfPath(path);
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
        return send(res, 400, "application/json", BAD_JSON);
      }
      stats.requests++;
      if (req.stream) streamed(a, req, res);
      else plain(a, req, res);
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
