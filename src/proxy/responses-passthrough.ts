/**
 * The agent APIs' routes that generate nothing, passed to a backend as they are (method, path
 * and query, headers, body), with its status, headers and body back: no program, no seat, no
 * stream to read.
 *
 * - `GET`/`DELETE /v1/responses/{id}` and `POST /v1/responses/{id}/cancel` go to the backend
 *   that stores the response (response-homes.ts). A response maitred did not see made (the
 *   router restarted, or a client of the backend's own) is looked for on every healthy
 *   backend in turn: the first answer that is not a 404 is the answer, else the last 404.
 *   A response another caller made (response-homes.ts `reachable`) is answered as an id no
 *   backend stores, on the same terms (no healthy backend: 503; else the 404 the last one
 *   would give, naming it), and no backend is asked (unknown-response.ts).
 * - `POST /v1/messages/count_tokens` goes to a healthy backend (every backend serving the
 *   model counts the same).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Upstream } from "../backends/upstream-pools.ts";
import { Errors } from "../errors.ts";
import { withQuery } from "./completion/forward.ts";
import { forwardRequestHeaders, relayResponseHeaders } from "./headers.ts";
import type { ProxyDeps } from "./proxy-deps.ts";
import { readBody } from "./read-body.ts";
import { reachable } from "./response-homes.ts";
import { unknownResponseAnswer } from "./unknown-response.ts";

/** These answers are small JSON documents; a backend slower than this has failed. */
const PASSTHROUGH_TIMEOUT_MS = 60_000;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

async function call(
  upstream: Upstream,
  method: "GET" | "POST" | "DELETE",
  path: string,
  headers: Record<string, string | string[]>,
  body: Buffer,
): Promise<Answer> {
  try {
    const res = await upstream.pool.request({
      method,
      path: upstream.prefix + path,
      headers,
      body: method === "GET" ? undefined : body,
      signal: AbortSignal.timeout(PASSTHROUGH_TIMEOUT_MS),
    });
    const buf = Buffer.from(await res.body.arrayBuffer());
    return { status: res.statusCode, headers: res.headers, body: buf };
  } catch (err) {
    throw Errors.backendUnreachable(upstream.id, err);
  }
}

function healthyUpstreams(deps: ProxyDeps): Upstream[] {
  const out: Upstream[] = [];
  for (const u of deps.upstreams.all()) if (deps.loop.scheduler.backendHealthy(u.id)) out.push(u);
  return out;
}

/**
 * Pass one request through to the backend holding response `responseId` (null: any healthy
 * backend), and write its answer.
 */
export async function passThrough(
  deps: ProxyDeps,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  requestId: string,
  path: string,
  responseId: string | null,
): Promise<void> {
  const method = (incoming.method ?? "GET") as "GET" | "POST" | "DELETE";
  const body = method === "GET" ? Buffer.alloc(0) : await readBody(incoming, deps.maxBodySize);
  const headers = forwardRequestHeaders(incoming.headers, body.length, requestId);
  if (method === "GET") delete headers["content-length"];
  const known = responseId === null ? undefined : deps.responseHomes?.get(responseId);
  // Checked after the body is read, so a body refused (413) is refused whoever owns the id.
  const foreign = !reachable(known, deps.callers.tenantOf(incoming.headers));
  const home = foreign ? undefined : known;
  const homeUpstream = home === undefined ? undefined : deps.upstreams.get(home.backendId);
  const candidates = homeUpstream !== undefined ? [homeUpstream] : healthyUpstreams(deps);
  if (candidates.length === 0) throw Errors.noHealthyBackend();
  if (foreign) {
    const last = candidates[candidates.length - 1];
    deps.logger.warn("stored response of another caller answered as unknown", {
      requestId,
      responseId,
      method,
    });
    write(outgoing, unknownResponseAnswer(responseId as string), last.id);
    return;
  }
  const target = withQuery(path, incoming.url);
  let answer: Answer | null = null;
  let backend = "";
  for (const u of responseId === null ? candidates.slice(0, 1) : candidates) {
    answer = await call(u, method, target, headers, body);
    backend = u.id;
    if (answer.status !== 404) break;
  }
  const a = answer as Answer;
  // A response deleted on its backend is gone: its id no longer names a place.
  if (responseId !== null && method === "DELETE" && a.status >= 200 && a.status < 300)
    deps.responseHomes?.forget(responseId);
  write(outgoing, a, backend);
}

/** A backend's answer as the client gets it, naming the backend. */
function write(outgoing: ServerResponse, a: Answer, backend: string): void {
  const out = relayResponseHeaders(a.headers, true);
  out["content-length"] = String(a.body.length);
  out["x-maitred-backend"] = backend;
  outgoing.writeHead(a.status, out);
  outgoing.end(a.body);
}
