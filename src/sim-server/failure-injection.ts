/**
 * Failure injection for router tests (after llm-d-inference-sim's
 * `--failure-injection-rate` and `X-Return-Error`): a seeded rate of failed requests, a
 * per-request status header, and a mid-stream error after N tokens.
 */

import { Errors } from "../errors.ts";
import { createRng } from "../workload/prng.ts";

export const RETURN_ERROR_HEADER = "x-sim-return-error";
export const STREAM_ERROR_AFTER_HEADER = "x-sim-stream-error-after";

/** Status of the mid-stream error event (a vLLM engine error is a 500). */
export const STREAM_ERROR_STATUS = 500;

export interface FailurePlan {
  /** Fail the request before it starts with this status (null = do not). */
  status: number | null;
  /** Send an error event after this many generated tokens (null = do not). */
  streamErrorAfter: number | null;
}

export interface FailureInjectorOptions {
  rate: number;
  codes: readonly number[];
  streamErrorAfter: number | null;
  seed: number;
}

export interface FailureInjector {
  /** Decide this request's fate; throws 400 on a malformed control header. */
  plan(headers: Headers): FailurePlan;
}

const MIN_STATUS = 400;
const MAX_STATUS = 599;

function headerInt(headers: Headers, name: string, min: number, max: number): number | null {
  const raw = headers.get(name);
  if (raw === null) return null;
  const n = Number(raw.trim());
  if (raw.trim() === "" || !Number.isInteger(n) || n < min || n > max) {
    throw Errors.badRequest(`Header ${name} must be an integer in [${min}, ${max}], got "${raw}".`);
  }
  return n;
}

export function createFailureInjector(options: FailureInjectorOptions): FailureInjector {
  // The same seed gives the same sequence of injected failures.
  const uniform = createRng(options.seed).next;
  return {
    plan(headers) {
      let status = headerInt(headers, RETURN_ERROR_HEADER, MIN_STATUS, MAX_STATUS);
      // Draw only when a rate is set, so enabling the header never shifts the seeded sequence.
      if (status === null && options.rate > 0 && options.codes.length > 0) {
        if (uniform() < options.rate) {
          status = options.codes[Math.floor(uniform() * options.codes.length)];
        }
      }
      const after =
        headerInt(headers, STREAM_ERROR_AFTER_HEADER, 0, Number.MAX_SAFE_INTEGER) ??
        options.streamErrorAfter;
      return { status, streamErrorAfter: after };
    },
  };
}
