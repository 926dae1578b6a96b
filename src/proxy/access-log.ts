/**
 * The access log: one line at `info` per finished request, so that the request id every answer
 * carries (`x-request-id`) can be found in the logs, with what an operator asks of a request
 * first: where it ran, how long it was held, when its first token came, what it cost and how it
 * ended. The route fills an entry as the request goes; the app's middleware writes it once the
 * answer is over (`--access-log off`: no entry, no line). Probes and scrapes (`/health`,
 * `/metrics`, the live page's feed) are not logged: they would bury the requests.
 */
import type { Usage } from "../core/events.ts";
import type { Logger } from "../util/logger.ts";

/** What a route learns about its request; null = not known (or not applicable). */
export interface AccessEntry {
  programId: string | null;
  priorityClass: string | null;
  backend: string | null;
  heldMs: number | null;
  /** From arrival to the first token of the answer. */
  ttftMs: number | null;
  usage: Usage | null;
  /** The stable code of the error that ended it (`error.code` of the envelope), if any. */
  errorCode: string | null;
}

export function createAccessEntry(): AccessEntry {
  return {
    programId: null,
    priorityClass: null,
    backend: null,
    heldMs: null,
    ttftMs: null,
    usage: null,
    errorCode: null,
  };
}

const NOT_LOGGED = new Set(["/health", "/metrics", "/ui/events"]);

/** Whether a request to `path` gets an access log line. */
export function isLogged(path: string): boolean {
  return !NOT_LOGGED.has(path);
}

const round = (ms: number | null) => (ms === null ? null : Math.round(ms));

/** The line, written once the answer is over (`durationMs` from arrival to that moment). */
export function writeAccessLog(
  logger: Logger,
  request: { id: string; method: string; path: string; status: number; durationMs: number },
  e: AccessEntry,
): void {
  logger.info("request", {
    requestId: request.id,
    method: request.method,
    path: request.path,
    status: request.status,
    programId: e.programId,
    class: e.priorityClass,
    backend: e.backend,
    heldMs: round(e.heldMs),
    ttftMs: round(e.ttftMs),
    durationMs: Math.round(request.durationMs),
    promptTokens: e.usage?.promptTokens ?? null,
    cachedTokens: e.usage?.cachedTokens ?? null,
    completionTokens: e.usage?.completionTokens ?? null,
    error: e.errorCode,
  });
}
