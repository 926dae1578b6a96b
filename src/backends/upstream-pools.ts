/**
 * One keep-alive undici Pool per backend, shared by the
 * forwarder, the metrics clients and `/v1/models`. A backend id is its base URL, which may carry
 * a path prefix; `pathFor` puts the prefix in front of an API path.
 */
import { Pool } from "undici";

export interface Upstream {
  id: string;
  pool: Pool;
  /** Path prefix of the base URL ("" for `http://host:port`). */
  prefix: string;
}

export interface UpstreamPoolsOptions {
  backends: readonly string[];
  /** Connections per backend; 0 = unlimited (ThunderAgent's httpx client). */
  connections: number;
  /** Headers and body-idle timeout (ms). */
  timeoutMs: number;
}

export interface UpstreamPools {
  get(id: string): Upstream | undefined;
  all(): Upstream[];
  close(): Promise<void>;
}

/** Keep idle upstream sockets longer than undici's 4 s default: agent turns come seconds apart. */
const KEEP_ALIVE_MS = 30_000;

export function createUpstreamPools(options: UpstreamPoolsOptions): UpstreamPools {
  const map = new Map<string, Upstream>();
  for (const id of options.backends) {
    const url = new URL(id);
    const pool = new Pool(url.origin, {
      connections: options.connections > 0 ? options.connections : null,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MS,
    });
    map.set(id, { id, pool, prefix: url.pathname === "/" ? "" : url.pathname });
  }
  return {
    get: (id) => map.get(id),
    all: () => [...map.values()],
    async close() {
      await Promise.all([...map.values()].map((u) => u.pool.destroy().catch(() => {})));
    },
  };
}

/**
 * Largest document read from a backend. A vLLM `/metrics` of a big node is a few hundred KiB;
 * one that is much larger is broken or hostile, and reading it whole would cost the router its
 * memory.
 */
export const MAX_BACKEND_DOCUMENT_BYTES = 16 * 1024 * 1024;

/** GET a small document (metrics, server info, model list) through a backend's pool. */
export async function getText(
  upstream: Upstream,
  path: string,
  signal: AbortSignal,
  limit = MAX_BACKEND_DOCUMENT_BYTES,
): Promise<{ status: number; text: string }> {
  const res = await upstream.pool.request({
    method: "GET",
    path: upstream.prefix + path,
    signal,
  });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      res.body.destroy();
      throw new Error(`GET ${path} is larger than ${limit} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return { status: res.statusCode, text: Buffer.concat(chunks, size).toString("utf8") };
}
