import { request } from "undici";

/**
 * `GET /v1/models` on the target, so `maitred bench --url X` works without `--model` and can
 * cap programs at the served context length (vLLM lists `max_model_len` per model).
 */

export interface ServedModel {
  id: string;
  maxModelLen: number | null;
}

/** Give up quickly: a bench against a dead URL should say so, not hang. */
const DISCOVERY_TIMEOUT_MS = 10_000;

export async function discoverModel(url: string): Promise<ServedModel | null> {
  const base = url.replace(/\/+$/, "").replace(/\/v1$/, "");
  try {
    const res = await request(`${base}/v1/models`, {
      headersTimeout: DISCOVERY_TIMEOUT_MS,
      bodyTimeout: DISCOVERY_TIMEOUT_MS,
    });
    const body = (await res.body.json().catch(() => null)) as {
      data?: { id?: unknown; max_model_len?: unknown }[];
    } | null;
    if (res.statusCode !== 200) return null;
    const first = body?.data?.[0];
    if (!first || typeof first.id !== "string") return null;
    return {
      id: first.id,
      maxModelLen: typeof first.max_model_len === "number" ? first.max_model_len : null,
    };
  } catch {
    return null;
  }
}
