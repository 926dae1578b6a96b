/**
 * Header hygiene for the forwarder. Hop-by-hop headers are connection-level and never forwarded
 * in either direction (RFC 9110 §7.6.1, https://datatracker.ietf.org/doc/html/rfc9110#section-7.6.1),
 * nor are the headers a `Connection` header names. maitred's own request headers stop here;
 * `Authorization` is forwarded (ThunderAgent does not).
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";

/** A request header's value; a repeated header gives its first. */
export function firstHeader(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** Request headers that describe the client's body or connection; the forwarder sets its own. */
const REQUEST_DROP = new Set([
  "host",
  "content-length",
  "expect",
  "x-program-id",
  "x-program-final",
  "x-parent-program-id",
]);

function connectionListed(value: string | string[] | undefined): Set<string> | null {
  if (value === undefined) return null;
  const text = Array.isArray(value) ? value.join(",") : value;
  const names = text
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== "" && s !== "close" && s !== "keep-alive");
  return names.length > 0 ? new Set(names) : null;
}

/** Headers to send upstream (lower-case keys, as Node gives them). */
export function forwardRequestHeaders(
  incoming: IncomingHttpHeaders,
  bodyLength: number,
  requestId?: string,
): Record<string, string | string[]> {
  const listed = connectionListed(incoming.connection);
  const out: Record<string, string | string[]> = {};
  for (const key in incoming) {
    if (HOP_BY_HOP.has(key) || REQUEST_DROP.has(key) || key.startsWith("x-maitred-")) continue;
    if (listed?.has(key)) continue;
    const v = incoming[key];
    if (v !== undefined) out[key] = v;
  }
  out["content-length"] = String(bodyLength);
  // The id maitred's log lines carry, so the backend's logs can be matched with them.
  if (requestId !== undefined) out["x-request-id"] = requestId;
  // maitred reads every answer on its way (first token, progress, usage, a rebuilt plain
  // answer), so it asks for it uncompressed whatever the client accepts.
  out["accept-encoding"] = "identity";
  if (out["content-type"] === undefined) out["content-type"] = "application/json";
  return out;
}

/**
 * Headers to send the client: the backend's own, minus hop-by-hop ones. `dropLength` removes
 * Content-Length when the body may differ from the backend's (a filtered stream).
 */
export function relayResponseHeaders(
  upstream: Record<string, string | string[] | undefined>,
  dropLength: boolean,
): OutgoingHttpHeaders {
  const listed = connectionListed(upstream.connection);
  const out: OutgoingHttpHeaders = {};
  for (const key in upstream) {
    if (HOP_BY_HOP.has(key) || listed?.has(key)) continue;
    if (dropLength && key === "content-length") continue;
    // maitred's own id (the client's, or the one it made) is the answer's; see request-id.ts.
    if (key === "x-request-id") continue;
    const v = upstream[key];
    if (v !== undefined) out[key] = v;
  }
  return out;
}
