/**
 * What went wrong on the way to (or back from) a backend, decided in one place: the client's
 * error, the request's outcome for the core, and the kind counted in `maitred_upstream_errors_total`.
 */
import type { RequestOutcome } from "../core/events.ts";
import { Errors, MaitredError } from "../errors.ts";

export type UpstreamErrorKind = "unreachable" | "timeout" | "status" | "stream";

export interface Failure {
  error: MaitredError;
  outcome: RequestOutcome;
  /** Set when the backend is at fault (metrics; `unreachable` also counts towards unhealthy). */
  kind: UpstreamErrorKind | null;
  /**
   * The connection to the backend failed: refused, reset, or closed before the answer ended.
   * Not a timeout, not our own abort, not an answer that arrived whole but unusable.
   */
  connection?: boolean;
}

const TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

function codeOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * Classify an error. `abortReason` is the reason maitred aborted the upstream call with (client
 * gone, core cancel), which wins over whatever undici threw because of it. `responded` tells a
 * broken stream from a backend that never answered.
 */
export function classifyFailure(
  err: unknown,
  abortReason: unknown,
  backendId: string | null,
  responded: boolean,
): Failure {
  const cause = abortReason ?? err;
  if (cause instanceof MaitredError) {
    if (cause.code === "client_closed")
      return { error: cause, outcome: "client_closed", kind: null };
    return { error: cause, outcome: "cancelled", kind: null };
  }
  // Not a MaitredError and no backend involved yet: a bug of ours, not the backend's.
  if (backendId === null)
    return { error: Errors.internal(undefined, err), outcome: "cancelled", kind: null };
  const backend = backendId;
  const code = codeOf(err);
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return { error: Errors.backendTimeout(backend, err), outcome: "timeout", kind: "timeout" };
  }
  // No response at all: refused, reset, DNS, TLS... the backend is unreachable (502).
  if (!responded) {
    return {
      error: Errors.backendUnreachable(backend, err),
      outcome: "backend_unreachable",
      kind: "unreachable",
      connection: true,
    };
  }
  return {
    error: Errors.backendUnreachable(backend, err),
    outcome: "upstream_error",
    kind: "stream",
    connection: true,
  };
}

/** Carries a classified failure out of the forwarder. */
export class ForwardError extends Error {
  readonly failure: Failure;
  constructor(failure: Failure) {
    super(failure.error.message, { cause: failure.error });
    this.name = "ForwardError";
    this.failure = failure;
  }
}
