/**
 * Every request has an id its log lines carry and its answer returns (`x-request-id`): the
 * client's own when it sent a usable one (so a trace started upstream goes on through maitred
 * and, forwarded, into the backend's logs; vLLM takes it for its request id), else a fresh one.
 */
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { firstHeader } from "./headers.ts";

/** Visible ASCII, as ids in headers and logs are; long enough for any tracing id scheme. */
const USABLE = /^[\x21-\x7e]{1,128}$/;

export function requestIdOf(headers: IncomingHttpHeaders): string {
  const given = firstHeader(headers, "x-request-id");
  return given !== undefined && USABLE.test(given) ? given : randomUUID();
}
