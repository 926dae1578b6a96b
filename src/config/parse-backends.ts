import { ConfigError } from "../errors.ts";
import { parseList, type ValueSource } from "./parse-value.ts";

/** Upper bound for `sim:N`: each simulated backend is a server in this process. */
const MAX_SIM_BACKENDS = 64;

export interface ParsedBackends {
  backends: string[];
  simBackends: number;
}

/**
 * `--backends`: comma-separated base URLs ("no `/v1`"), or `sim:N` to start
 * N simulated backends in-process. URLs are normalised without a trailing slash because the
 * URL is the backend's id everywhere (core BackendSpec.id).
 */
export function parseBackends(raw: unknown, src: ValueSource): ParsedBackends {
  const items = parseList(raw, src);
  const sim = items.length === 1 ? /^sim:(\d+)$/.exec(items[0]) : null;
  if (sim) {
    const n = Number(sim[1]);
    if (n < 1 || n > MAX_SIM_BACKENDS) {
      throw new ConfigError(
        src.field,
        `sim:N needs 1 ≤ N ≤ ${MAX_SIM_BACKENDS}, got ${n} (from ${src.origin})`,
      );
    }
    return { backends: [], simBackends: n };
  }
  const seen = new Set<string>();
  const backends = items.map((item) => {
    let url: URL;
    try {
      url = new URL(item);
    } catch {
      throw new ConfigError(src.field, `not a URL: ${JSON.stringify(item)} (from ${src.origin})`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new ConfigError(src.field, `backend URL must be http(s): ${item} (from ${src.origin})`);
    }
    if (url.search || url.hash) {
      throw new ConfigError(
        src.field,
        `backend URL must not have a query or fragment: ${item} (from ${src.origin})`,
      );
    }
    const normal = `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
    if (seen.has(normal)) {
      throw new ConfigError(src.field, `backend listed twice: ${normal} (from ${src.origin})`);
    }
    seen.add(normal);
    return normal;
  });
  return { backends, simBackends: 0 };
}
