/**
 * One error tree for the whole of maitred, with stable codes, mapped to the OpenAI error
 * envelope `{"error":{"message","type","param","code"}}` in exactly one place
 * (`toErrorResponse`). Route handlers throw; the HTTP layers' `onError` hooks call
 * `toErrorResponse`.
 *
 * `type` follows vLLM's names so that a client sees the same
 * envelope whether it talks to vLLM, the simulated backend or the router.
 */

export type ErrorCode =
  | "bad_request"
  | "unauthorized"
  | "forbidden"
  | "invalid_json"
  | "json_too_deep"
  | "program_id_invalid"
  | "context_length_exceeded"
  | "not_found"
  | "model_not_found"
  | "payload_too_large"
  | "body_budget_full"
  | "malformed_request"
  | "headers_too_large"
  | "request_timeout"
  | "expectation_failed"
  | "method_not_allowed"
  | "rate_limited"
  | "queue_full"
  | "program_budget_exceeded"
  | "queue_timeout"
  | "client_closed"
  | "no_healthy_backend"
  | "stored_response_unavailable"
  | "backend_unreachable"
  | "backend_error"
  | "paused_too_long"
  | "preempted"
  | "shutting_down"
  | "cell_draining"
  | "injected_failure"
  | "internal";

/** vLLM's error `type` per HTTP status. */
const TYPE_BY_STATUS: Record<number, string> = {
  400: "BadRequestError",
  401: "AuthenticationError",
  403: "PermissionDeniedError",
  404: "NotFoundError",
  405: "MethodNotAllowedError",
  408: "RequestTimeoutError",
  413: "PayloadTooLargeError",
  417: "ExpectationFailedError",
  429: "RateLimitError",
  431: "RequestHeaderFieldsTooLargeError",
  499: "ClientClosedRequestError",
  500: "InternalServerError",
  502: "BadGatewayError",
  503: "ServiceUnavailableError",
  504: "GatewayTimeoutError",
};

export function errorTypeForStatus(status: number): string {
  return TYPE_BY_STATUS[status] ?? (status >= 500 ? "InternalServerError" : "BadRequestError");
}

export interface MaitredErrorOptions {
  param?: string | null;
  /** Extra response headers, e.g. `Retry-After`. */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class MaitredError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  constructor(status: number, code: ErrorCode, message: string, options: MaitredErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "MaitredError";
    this.status = status;
    this.code = code;
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
  }
}

/** Constructors for every error maitred raises; callers never pick status codes by hand. */
export const Errors = {
  badRequest: (message: string, param: string | null = null) =>
    new MaitredError(400, "bad_request", message, { param }),
  unauthorized: () =>
    new MaitredError(
      401,
      "unauthorized",
      "This route needs the admin token (Authorization: Bearer).",
      {
        headers: { "www-authenticate": "Bearer" },
      },
    ),
  forbidden: () =>
    new MaitredError(
      403,
      "forbidden",
      "This route answers loopback clients only; start maitred with --admin-token to reach it from elsewhere.",
    ),
  invalidProgramId: (message: string, param: string) =>
    new MaitredError(400, "program_id_invalid", message, { param }),
  jsonTooDeep: (limit: number) =>
    new MaitredError(400, "json_too_deep", `Request body nests deeper than ${limit} levels.`),
  invalidJson: (detail: string) =>
    new MaitredError(400, "invalid_json", `Request body is not valid JSON: ${detail}`),
  contextLength: (message: string) =>
    new MaitredError(400, "context_length_exceeded", message, { param: "messages" }),
  notFound: (message: string, param: string | null = null) =>
    new MaitredError(404, "not_found", message, { param }),
  modelNotFound: (model: string) =>
    new MaitredError(404, "model_not_found", `The model \`${model}\` does not exist.`, {
      param: "model",
    }),
  malformedRequest: (detail: string) =>
    new MaitredError(400, "malformed_request", `Malformed HTTP request: ${detail}.`),
  headersTooLarge: () =>
    new MaitredError(431, "headers_too_large", "Request header fields are too large."),
  requestTimeout: () =>
    new MaitredError(408, "request_timeout", "The request was not received in time."),
  expectationFailed: (expect: string) =>
    new MaitredError(417, "expectation_failed", `Expect: ${expect} is not supported.`),
  bodyBudgetFull: () =>
    new MaitredError(
      503,
      "body_budget_full",
      "Too many request bytes are held right now (--max-buffered-bytes); retry shortly.",
      { headers: { "retry-after": "1" } },
    ),
  payloadTooLarge: (limit: number) =>
    new MaitredError(413, "payload_too_large", `Request body exceeds the limit of ${limit} bytes.`),
  queueFull: (message: string) =>
    new MaitredError(429, "queue_full", message, { headers: { "retry-after": "1" } }),
  /**
   * A program passed its `kind` budget (`limit` of it; null when its id was ended so a while
   * ago). Retrying cannot help, so clients that honour `x-should-retry` are told not to.
   */
  budgetExceeded: (kind: string, limit: number | null, ofParent = false) =>
    new MaitredError(
      429,
      "program_budget_exceeded",
      ofParent
        ? `This program's parent was ended by its ${kind} budget, and its sub-agents with it.`
        : limit === null
          ? `This program was ended by its ${kind} budget; start a new program (a new program id) to go on.`
          : `This program has used its ${kind} budget (${kind === "wall" ? `${limit / 1000} s` : `${limit} ${kind}`}); maitred released it.`,
      { param: `budget.${kind}`, headers: { "x-should-retry": "false" } },
    ),
  queueTimeout: (message: string) => new MaitredError(408, "queue_timeout", message),
  clientClosed: () => new MaitredError(499, "client_closed", "Client closed the request."),
  noHealthyBackend: (retryAfterSeconds = 1) =>
    new MaitredError(503, "no_healthy_backend", "No healthy backend is available.", {
      headers: { "retry-after": String(retryAfterSeconds) },
    }),
  /**
   * The request continues a response stored on one backend only (`previous_response_id`), and
   * that backend is unhealthy or gone: served anywhere else it would find no such response.
   */
  storedResponseUnavailable: (backend: string, why: "unhealthy" | "unknown") =>
    new MaitredError(
      503,
      "stored_response_unavailable",
      why === "unhealthy"
        ? `Backend ${backend}, which stores the response this request continues, is unhealthy; retry when it is back.`
        : `Backend ${backend}, which stored the response this request continues, is no longer configured.`,
      { param: "previous_response_id", headers: { "retry-after": "1" } },
    ),
  backendUnreachable: (backend: string, cause?: unknown) =>
    new MaitredError(502, "backend_unreachable", `Backend ${backend} is unreachable.`, { cause }),
  backendIncomplete: (backend: string) =>
    new MaitredError(
      502,
      "backend_error",
      `Backend ${backend} ended its stream without an answer.`,
    ),
  backendTimeout: (backend: string, cause?: unknown) =>
    new MaitredError(504, "backend_error", `Backend ${backend} timed out.`, { cause }),
  pausedTooLong: (waitedMs: number, retryAfterSeconds = 1) =>
    new MaitredError(
      503,
      "paused_too_long",
      `Program was paused for ${waitedMs} ms, longer than x-maitred-max-wait-ms allows.`,
      { headers: { "retry-after": String(retryAfterSeconds) } },
    ),
  preempted: () =>
    new MaitredError(503, "preempted", "Request was preempted by a higher-priority program.", {
      headers: { "retry-after": "1", "x-maitred-preempted": "true" },
    }),
  /** A draining cell refuses programs it does not have; a balancer or the SDK's retry moves them. */
  cellDraining: (cell: string) =>
    new MaitredError(
      503,
      "cell_draining",
      `Router cell ${cell} is draining and takes no new programs; retry and the balancer sends the request to another cell.`,
      { headers: { "retry-after": "1" } },
    ),
  shuttingDown: () =>
    new MaitredError(503, "shutting_down", "Server is shutting down.", {
      headers: { "retry-after": "5" },
    }),
  injected: (status: number) =>
    new MaitredError(status, "injected_failure", `Injected failure (status ${status}).`),
  internal: (message = "Internal server error", cause?: unknown) =>
    new MaitredError(500, "internal", message, { cause }),
} as const;

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | number };
}

/**
 * What `error.code` holds: maitred's own stable name (`"queue_full"`), as the OpenAI schema
 * has a string there, or the HTTP status, as vLLM writes it (the simulated backend's shape).
 */
export type ErrorCodeStyle = "name" | "status";

export interface ErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
}

/** The one mapping from anything thrown to an OpenAI-envelope response. */
export function toErrorResponse(err: unknown, style: ErrorCodeStyle = "name"): ErrorResponse {
  const e = err instanceof MaitredError ? err : Errors.internal();
  return {
    status: e.status,
    headers: e.headers,
    body: {
      error: {
        message: e.message,
        type: errorTypeForStatus(e.status),
        param: e.param,
        code: style === "name" ? e.code : e.status,
      },
    },
  };
}

/** The envelope as a JSON string (SSE error events and plain responses). */
export function errorBodyJson(err: unknown, style: ErrorCodeStyle = "name"): string {
  return JSON.stringify(toErrorResponse(err, style).body);
}

/**
 * The API whose error envelope a route answers in: OpenAI's for every route but the Anthropic
 * Messages API's (`/v1/messages…`), whose SDKs read `{"type":"error","error":{"type","message"}}`.
 */
export type Envelope = "openai" | "anthropic";

export function envelopeOfPath(path: string): Envelope {
  return path === "/v1/messages" || path.startsWith("/v1/messages/") ? "anthropic" : "openai";
}

/**
 * Anthropic's error types and the status its API answers each with, one table read both ways:
 * status → type names the errors maitred writes in that envelope, type → status turns an
 * error event of a Messages stream back into the status of a plain answer. 529 is Anthropic's
 * own status for an overloaded API; maitred's 503s mean the same, so they are that type too.
 */
const ANTHROPIC_STATUS_BY_TYPE: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

const ANTHROPIC_TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  ...Object.fromEntries(Object.entries(ANTHROPIC_STATUS_BY_TYPE).map(([t, s]) => [s, t])),
  503: "overloaded_error",
};

/** Anthropic's error `type` per status (the names its API and SDKs use). */
export function anthropicErrorType(status: number): string {
  return (
    ANTHROPIC_TYPE_BY_STATUS[status] ?? (status >= 500 ? "api_error" : "invalid_request_error")
  );
}

/** The status Anthropic answers an error of `type` with; undefined for a type it does not name. */
export function anthropicErrorStatus(type: unknown): number | undefined {
  return typeof type === "string" && Object.hasOwn(ANTHROPIC_STATUS_BY_TYPE, type)
    ? ANTHROPIC_STATUS_BY_TYPE[type]
    : undefined;
}

export interface AnthropicErrorBody {
  type: "error";
  error: { type: string; message: string };
}

/** An error as the Anthropic envelope: the same error, status and headers, in that API's words. */
export function toAnthropicErrorBody(res: ErrorResponse): AnthropicErrorBody {
  return {
    type: "error",
    error: { type: anthropicErrorType(res.status), message: res.body.error.message },
  };
}

/** The error's body in the route's envelope. */
export function envelopeBody(
  res: ErrorResponse,
  envelope: Envelope,
): ErrorBody | AnthropicErrorBody {
  return envelope === "anthropic" ? toAnthropicErrorBody(res) : res.body;
}

/**
 * Bad configuration (a flag, an environment twin or a config-file field). The CLI prints one
 * line naming the field and exits with code 2; it never becomes an HTTP response.
 */
export class ConfigError extends Error {
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = "ConfigError";
    this.field = field;
  }
}
