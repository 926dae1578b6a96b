/**
 * Everything that can happen to the scheduler core, as one discriminated union. The run loop (HTTP
 * runtime) and the simulator runtime both feed the core through these and nothing else. Times are
 * milliseconds on the runtime's clock (wall or virtual); the core never reads a clock itself.
 */

import type { PriorityClass } from "./priority/priority-classes.ts";

/** Why a request ended. Every end is finalised in one place. */
export type RequestOutcome =
  | "ok" // the backend answered 2xx and the body was delivered
  | "upstream_error" // the backend answered non-2xx, or the stream broke
  | "client_closed" // the client went away (mid-stream or while waiting for the body)
  | "timeout" // upstream timeout
  | "backend_unreachable" // connection refused / reset before any response
  | "cancelled"; // maitred itself cancelled it (shutdown, preemption, unhealthy backend)

/** Usage as the engine reported it (OpenAI `usage`). */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** `usage.prompt_tokens_details.cached_tokens`, when the backend sends it. */
  cachedTokens?: number;
}

/**
 * Engine truth from one poll of a backend's metrics endpoint. A gauge the endpoint does not
 * export is null: unknown, never zero (a missing KV usage read as 0 % would invent free room).
 */
export interface BackendMetricsSample {
  /** KV capacity in tokens (vLLM: block_size × num_gpu_blocks; SGLang: max_total_num_tokens). */
  capacityTokens: number | null;
  /** 0..1 (vLLM `kv_cache_usage_perc`, SGLang `token_usage`); null = not exported. */
  kvUsage: number | null;
  /** Requests the engine is running; null = not exported. */
  running: number | null;
  /** Requests the engine holds waiting for KV or a batch slot; null = not exported. */
  waiting: number | null;
  /** Engine preemptions (SGLang: retractions) since it started; null = not exported. */
  preemptionsTotal: number | null;
  prefixCacheQueriesTotal: number;
  prefixCacheHitsTotal: number;
  promptTokensTotal: number;
  generationTokensTotal: number;
  /**
   * The engine keeps the KV it evicts from the GPU in host memory (vLLM `kv_offloading_size`,
   * SGLang HiCache), so a paused program's context comes back from there at transfer cost, on
   * this backend only. Absent: the engine does not say, taken as no tier.
   */
  hostKvTier?: boolean;
  /**
   * Tokens of KV that host tier holds, when known: SGLang's `hicache_host_total_tokens`;
   * vLLM's `kv_offloading_size` GiB over the model's KV bytes per token (`--kv-bytes-per-token`);
   * or the operator's `--host-kv-tokens`. Absent: unknown, and nothing is assumed of its size.
   */
  hostKvTokens?: number;
  /**
   * KV the engine has loaded from its host tier into the GPU since it started, in bytes and in
   * seconds spent loading (vLLM `kv_offload_load_bytes` / `kv_offload_load_time`, or their
   * older `kv_offload_total_bytes` / `kv_offload_total_time` with `transfer_type="CPU_to_GPU"`):
   * what a pause costs there, measured on the engine's own link. Absent: not reported, and a
   * transfer's cost is then unknown, not free.
   */
  hostLoadBytesTotal?: number;
  hostLoadSecondsTotal?: number;
}

/** The budgets a program runs under; a kind left out has no limit. */
export interface ProgramBudget {
  /** Requests that start a step (a retried request is the same step). */
  steps?: number;
  /** Prompt + completion tokens of its requests, summed (engine usage, else the estimate). */
  tokens?: number;
  /** Time since its first request (ms). */
  wallMs?: number;
}

export type SchedulerEvent =
  | {
      kind: "request_arrived";
      now: number;
      requestId: string;
      /** null = anonymous: forwarded to the least-loaded backend, never paused or queued. */
      programId: string | null;
      parentProgramId?: string;
      /** Characters of each message (chat) or of the prompt (completions), in order. */
      messageChars: number[];
      /** `x-program-final` / `program_final`: release the program after this response. */
      final: boolean;
      /**
       * The same client request again, after its backend failed before answering: the
       * program's step goes on (no new step, no tool time observed, no clamp counted twice).
       */
      retry?: boolean;
      /** `x-maitred-max-wait-ms`: answer 503 if parked longer than this. */
      maxWaitMs?: number;
      /**
       * Priority class, already resolved and clamped by the adapter with
       * `resolveRequestClass` (src/core/priority/priority-classes.ts). Absent = `default`.
       * Ignored while priorities are off.
       */
      priorityClass?: PriorityClass;
      /** The tenant clamp lowered the requested class (counted per class). */
      classClamped?: boolean;
      /**
       * The budget this request asks its program to run under: the caller's configured budget,
       * lowered by the request's own. A program keeps the lowest it was ever given.
       */
      budget?: ProgramBudget;
      /**
       * The backend that holds state this request continues (a stored response): the request
       * is served there or nowhere (pinned-backend.ts).
       */
      pinnedBackend?: string;
    }
  | {
      /**
       * The request's first response byte (also commits it: never preempted afterwards). An
       * adapter that writes to a client must use `Scheduler.tryCommitFirstByte` before the write
       * instead of relying on this event alone.
       */
      kind: "request_first_token";
      now: number;
      requestId: string;
    }
  | {
      /** Streaming progress: `completionTokens` generated so far in this request. */
      kind: "request_progress";
      now: number;
      requestId: string;
      completionTokens: number;
    }
  | {
      kind: "request_usage";
      now: number;
      requestId: string;
      usage: Usage;
    }
  | {
      /** The one end of every request that was granted or parked. */
      kind: "request_finished";
      now: number;
      requestId: string;
      outcome: RequestOutcome;
      /**
       * Its backend failed and the same client request is about to arrive again (`retry`): the
       * program's step goes on, so a final request does not release it, its growth is not
       * learned and a program marked for pause is not paused now.
       */
      retrying?: boolean;
      /**
       * The answer ended with `finish_reason: "stop"` and no tool call: the model's final
       * answer, so its program is likely done (likely-done.ts).
       */
      answerStopped?: boolean;
    }
  | { kind: "program_release"; now: number; programId: string }
  | {
      /**
       * The periodic scheduler tick. The runtime polls every backend first (bounded
       * concurrency, timeout) and hands the results in; a failed poll is `null`.
       */
      kind: "tick";
      now: number;
      metrics: Record<string, BackendMetricsSample | null>;
    }
  | {
      /** A forward to this backend failed at the connection level (counts towards unhealthy). */
      kind: "backend_failure";
      now: number;
      backendId: string;
      /**
       * The backend refused or reset the connection, or died before its answer was relayed:
       * unhealthy at once, until its next good poll.
       */
      down?: boolean;
    }
  | { kind: "shutdown"; now: number };
