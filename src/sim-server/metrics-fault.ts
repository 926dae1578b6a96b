/**
 * A runtime fault on the simulated backend's `/metrics`, for router tests and soaks: for a
 * while the exposition answers garbage (a 200 that is not Prometheus text), a 500 in the OpenAI
 * envelope, or a slow body (the head and half the text at once, the rest after a delay longer
 * than a router's poll timeout), then it is itself again. Set with `POST /sim/metrics-fault`
 * `{"mode": "garbage"|"error"|"slow"|"ok", "seconds"?: N, "delay_seconds"?: D}`; `ok` ends any
 * fault at once. Open like `x-sim-return-error`: the simulated backend is a test server that
 * listens on loopback unless told otherwise, and its generation routes already take failure
 * requests from any client.
 *
 * Time is the backend's clock, in real (unscaled) seconds: a fault is about the router's
 * polling, which runs in wall time whatever the engine's time scale.
 */

import { Errors } from "../errors.ts";
import type { Clock } from "../runtime/clock.ts";
import { PROMETHEUS_CONTENT_TYPE } from "./prom-format.ts";
import { parseJsonObject } from "./request-parse.ts";

export const METRICS_FAULT_PATH = "/sim/metrics-fault";
export const METRICS_FAULT_MODES = ["garbage", "error", "slow", "ok"] as const;
export type MetricsFaultMode = (typeof METRICS_FAULT_MODES)[number];

/** Longest fault, and longest slow-body delay: a day, so a typo cannot wedge a backend for years. */
export const MAX_FAULT_SECONDS = 86_400;
/** The slow body's delay when none is given: past the router's default `--poll-timeout` (10 s). */
export const DEFAULT_SLOW_DELAY_S = 15;
/** What `garbage` answers: a 200 with text no Prometheus parser reads as samples. */
export const GARBAGE_BODY =
  "\u0000\u00ff}{ this is not prometheus text\nvllm:num_requests_running{ NaNx\n";

const MS_PER_S = 1000;

export interface MetricsFaultState {
  mode: MetricsFaultMode;
  /** Clock time (ms) the fault ends; null = until changed (or `ok`). */
  untilMs: number | null;
  delayMs: number;
}

export interface MetricsFault {
  /** Validate a control body and apply it; throws a 400 naming the bad field. */
  set(bodyText: string): MetricsFaultState;
  /** The fault in force now (`ok` once its window has passed). */
  current(): MetricsFaultState;
  /** The `/metrics` answer under the fault in force, from the exposition `render` gives. */
  respond(render: () => string): Response;
}

const OK: MetricsFaultState = { mode: "ok", untilMs: null, delayMs: 0 };

function seconds(body: Record<string, unknown>, field: string): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v) || v <= 0 || v > MAX_FAULT_SECONDS) {
    throw Errors.badRequest(
      `Field \`${field}\` must be a number of seconds in (0, ${MAX_FAULT_SECONDS}].`,
      field,
    );
  }
  return v;
}

/** Parse a control body: a known mode, optional positive durations, no unknown fields. */
export function parseMetricsFault(bodyText: string, nowMs: number): MetricsFaultState {
  const body = parseJsonObject(bodyText);
  for (const key of Object.keys(body)) {
    if (key !== "mode" && key !== "seconds" && key !== "delay_seconds") {
      throw Errors.badRequest(
        `Unknown field \`${key}\`; known: mode, seconds, delay_seconds.`,
        key,
      );
    }
  }
  const mode = body.mode;
  if (typeof mode !== "string" || !(METRICS_FAULT_MODES as readonly string[]).includes(mode)) {
    throw Errors.badRequest(
      `Field \`mode\` must be one of ${METRICS_FAULT_MODES.join(", ")}.`,
      "mode",
    );
  }
  const secs = seconds(body, "seconds");
  const delay = seconds(body, "delay_seconds");
  if (mode === "ok") return OK;
  return {
    mode: mode as MetricsFaultMode,
    untilMs: secs === undefined ? null : nowMs + secs * MS_PER_S,
    delayMs: (delay ?? DEFAULT_SLOW_DELAY_S) * MS_PER_S,
  };
}

/** A body sent in two halves, the second `delayMs` after the first, on `clock`. */
function slowBody(text: string, delayMs: number, clock: Clock): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  const half = Math.floor(bytes.length / 2);
  let timer: { cancel(): void } | null = null;
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes.subarray(0, half));
      timer = clock.setTimeout(() => {
        controller.enqueue(bytes.subarray(half));
        controller.close();
      }, delayMs);
    },
    // The client gave up (a router's poll timeout): nothing more to send.
    cancel() {
      timer?.cancel();
    },
  });
}

export function createMetricsFault(clock: Clock): MetricsFault {
  let state: MetricsFaultState = OK;
  const current = () => {
    if (state.untilMs !== null && clock.now() >= state.untilMs) state = OK;
    return state;
  };
  return {
    set(bodyText) {
      state = parseMetricsFault(bodyText, clock.now());
      return state;
    },
    current,
    respond(render) {
      const { mode, delayMs } = current();
      const headers = { "content-type": PROMETHEUS_CONTENT_TYPE };
      switch (mode) {
        case "ok":
          return new Response(render(), { status: 200, headers });
        case "garbage":
          return new Response(GARBAGE_BODY, { status: 200, headers });
        case "error":
          throw Errors.injected(500);
        case "slow":
          return new Response(slowBody(render(), delayMs, clock), { status: 200, headers });
        default: {
          const never: never = mode;
          throw new Error(`unknown metrics fault ${String(never)}`);
        }
      }
    },
  };
}
