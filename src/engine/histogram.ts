/**
 * vLLM's histogram bucket boundaries (vllm-project/vllm
 * `vllm/v1/metrics/loggers.py`), exported so the HTTP layer renders the same `le` values, and a
 * tiny plain-data histogram the engine fills.
 */

import type { HistogramData } from "./types.ts";

/** `vllm:time_to_first_token_seconds`. */
export const TTFT_BUCKETS: readonly number[] = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
  40.0, 80.0, 160.0, 640.0, 2560.0,
];

/** `vllm:inter_token_latency_seconds`, `vllm:request_time_per_output_token_seconds`. */
export const ITL_BUCKETS: readonly number[] = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
  40.0, 80.0,
];

/** `vllm:e2e_request_latency_seconds` and the queue/prefill/decode/inference phase times. */
export const REQUEST_LATENCY_BUCKETS: readonly number[] = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
  480.0, 960.0, 1920.0, 7680.0,
];

/** `vllm:iteration_tokens_total`. */
export const ITERATION_TOKENS_BUCKETS: readonly number[] = [
  1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384,
];

/** vLLM's `vllm:kv_offload_size` buckets, bytes. */
export const KV_OFFLOAD_SIZE_BUCKETS: readonly number[] = [
  1e6, 5e6, 10e6, 20e6, 40e6, 60e6, 80e6, 100e6, 150e6, 200e6,
];

/** vLLM's `build_1_2_5_buckets(max)`: 1, 2, 5, 10, 20, 50, … up to the largest ≤ max. */
export function build125Buckets(max: number): number[] {
  const out: number[] = [];
  for (let exponent = 1; ; exponent *= 10) {
    for (const m of [1, 2, 5]) {
      const v = m * exponent;
      if (v > max) return out;
      out.push(v);
    }
  }
}

export interface Histogram {
  observe(value: number): void;
  snapshot(): HistogramData;
}

export function createHistogram(buckets: readonly number[]): Histogram {
  const counts = new Array<number>(buckets.length + 1).fill(0);
  let sum = 0;
  let count = 0;
  return {
    observe(value) {
      let i = 0;
      while (i < buckets.length && value > buckets[i]) i++;
      counts[i]++;
      sum += value;
      count++;
    },
    snapshot: () => ({ buckets, counts: counts.slice(), sum, count }),
  };
}
