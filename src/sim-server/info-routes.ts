/**
 * The small endpoints: models, health, version, tokenize,
 * detokenize, metrics (and its fault control, metrics-fault.ts), and SGLang's server info. `/tokenize` uses the same tokenizer and
 * chat template as generation, so its counts equal `usage.prompt_tokens`.
 */

import type { Hono } from "hono";
import { chatPromptTokens } from "../engine/chat-template.ts";
import { decode, encode } from "../engine/tokenizer.ts";
import { Errors } from "../errors.ts";
import type { Clock } from "../runtime/clock.ts";
import { METRICS_FAULT_PATH, type MetricsFault } from "./metrics-fault.ts";
import type { SimBackendOptions } from "./options.ts";
import { parseChatBody, parseJsonObject } from "./request-parse.ts";

/** What /version reports: the release whose metric and response shapes we reproduce. */
export const VLLM_VERSION = "0.11.0";
export const SGLANG_VERSION = "0.5.0";
const MS_PER_S = 1000;

export interface InfoRouteDeps {
  options: SimBackendOptions;
  /** Unix seconds of server start (`created` of /v1/models). */
  startedAt: number;
  renderMetrics: () => string;
  /** The fault `/metrics` answers under, set by `POST /sim/metrics-fault`. */
  metricsFault: MetricsFault;
  clock: Clock;
  /** Tokens in the KV pool (SGLang `max_total_num_tokens`). */
  maxTotalNumTokens: number;
  permissionId: string;
}

export function registerInfoRoutes(app: Hono, deps: InfoRouteDeps): void {
  const { options } = deps;
  const sglang = options.personality === "sglang";
  const created = Math.floor(deps.startedAt);
  const checkModel = (model: unknown) => {
    if (model !== undefined && model !== null && model !== options.model) {
      throw Errors.modelNotFound(String(model));
    }
  };

  const models = {
    object: "list",
    data: [
      {
        id: options.model,
        object: "model",
        created,
        owned_by: options.personality,
        root: options.model,
        parent: null,
        max_model_len: options.maxModelLen,
        permission: [
          {
            id: deps.permissionId,
            object: "model_permission",
            created,
            allow_create_engine: false,
            allow_sampling: true,
            allow_logprobs: true,
            allow_search_indices: false,
            allow_view: true,
            allow_fine_tuning: false,
            organization: "*",
            group: null,
            is_blocking: false,
          },
        ],
      },
    ],
  };
  app.get("/v1/models", (c) => c.json(models));

  const healthy = () => new Response(null, { status: 200 });
  app.get("/health", healthy);
  app.get("/ping", healthy);
  app.post("/ping", healthy);
  app.get("/version", (c) => c.json({ version: sglang ? SGLANG_VERSION : VLLM_VERSION }));

  app.get("/metrics", () => deps.metricsFault.respond(deps.renderMetrics));
  app.post(METRICS_FAULT_PATH, async (c) => {
    const state = deps.metricsFault.set(await c.req.text());
    return c.json({
      mode: state.mode,
      seconds_left: state.untilMs === null ? null : (state.untilMs - deps.clock.now()) / MS_PER_S,
      delay_seconds: state.mode === "slow" ? state.delayMs / MS_PER_S : null,
    });
  });

  app.post("/tokenize", async (c) => {
    const body = parseJsonObject(await c.req.text());
    checkModel(body.model);
    let tokens: number[];
    if (body.messages !== undefined) {
      const chat = parseChatBody(body);
      tokens = chatPromptTokens(chat.messages, { addGenerationPrompt: chat.addGenerationPrompt });
    } else if (typeof body.prompt === "string") {
      tokens = encode(body.prompt);
    } else {
      throw Errors.badRequest("Field `prompt` (string) or `messages` is required.", "prompt");
    }
    const tokenStrs = body.return_token_strs === true ? tokens.map((t) => decode([t])) : null;
    return c.json({
      count: tokens.length,
      max_model_len: options.maxModelLen,
      tokens,
      token_strs: tokenStrs,
    });
  });

  app.post("/detokenize", async (c) => {
    const body = parseJsonObject(await c.req.text());
    checkModel(body.model);
    const tokens = body.tokens;
    if (!Array.isArray(tokens) || !tokens.every((t) => Number.isInteger(t) && t >= 0)) {
      throw Errors.badRequest("Field `tokens` must be a list of token ids.", "tokens");
    }
    return c.json({ prompt: decode(tokens as number[]) });
  });

  if (sglang) registerSglangInfo(app, deps);
}

/** SGLang capacity discovery: `/get_server_info` and its canonical alias `/server_info`. */
function registerSglangInfo(app: Hono, deps: InfoRouteDeps): void {
  const { options } = deps;
  const serverInfo = () => ({
    model_path: options.model,
    tokenizer_path: options.model,
    served_model_name: options.model,
    context_length: options.maxModelLen,
    page_size: options.blockSize,
    chunked_prefill_size: options.maxNumBatchedTokens,
    max_running_requests: options.maxNumSeqs,
    mem_fraction_static: 0.9,
    schedule_policy: "fcfs",
    // SGLang's server arguments for priority scheduling, which its server info lists as well.
    enable_priority_scheduling: options.schedulingPolicy === "priority",
    schedule_low_priority_values_first: options.scheduleLowPriorityValuesFirst,
    priority_scheduling_preemption_threshold: options.prioritySchedulingPreemptionThreshold,
    random_seed: options.seed,
    status: "ready",
    max_total_num_tokens: deps.maxTotalNumTokens,
    max_req_input_len: options.maxModelLen - 1,
    internal_states: [{ memory_usage: { token_capacity: deps.maxTotalNumTokens } }],
    version: SGLANG_VERSION,
  });
  app.get("/get_server_info", (c) => c.json(serverInfo()));
  app.get("/server_info", (c) => c.json(serverInfo()));
  const modelInfo = () => ({
    model_path: options.model,
    tokenizer_path: options.model,
    is_generation: true,
  });
  app.get("/get_model_info", (c) => c.json(modelInfo()));
  app.get("/model_info", (c) => c.json(modelInfo()));
}
