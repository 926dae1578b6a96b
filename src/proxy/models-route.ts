/**
 * `GET /v1/models`: the union of every healthy backend's model list (ThunderAgent asked only
 * the first backend). A backend that fails to answer is
 * left out; no answer at all is a 502, no healthy backend a 503.
 */
import { getText } from "../backends/upstream-pools.ts";
import { Errors } from "../errors.ts";
import { errorLine } from "../util/error-line.ts";
import type { ProxyDeps } from "./proxy-deps.ts";

/** A model list is tiny; a backend slower than this is skipped rather than awaited. */
const MODELS_TIMEOUT_MS = 5000;

interface ModelCard {
  id: string;
  [key: string]: unknown;
}

export async function listModels(deps: ProxyDeps): Promise<{ object: "list"; data: ModelCard[] }> {
  const healthy = deps.loop.scheduler
    .snapshot()
    .backends.filter((b) => b.healthy)
    .map((b) => deps.upstreams.get(b.id))
    .filter((u) => u !== undefined);
  if (healthy.length === 0) throw Errors.noHealthyBackend();
  const answers = await Promise.all(
    healthy.map(async (u) => {
      try {
        const { status, text } = await getText(
          u,
          "/v1/models",
          AbortSignal.timeout(MODELS_TIMEOUT_MS),
        );
        if (status < 200 || status >= 300) return null;
        const doc = JSON.parse(text) as { data?: unknown };
        return Array.isArray(doc.data) ? (doc.data as ModelCard[]) : null;
      } catch (err) {
        deps.logger.warn("model list failed", { backend: u.id, error: errorLine(err) });
        return null;
      }
    }),
  );
  if (answers.every((a) => a === null))
    throw Errors.backendUnreachable(healthy.map((u) => u.id).join(", "));
  const byId = new Map<string, ModelCard>();
  for (const list of answers) {
    for (const card of list ?? []) {
      if (card && typeof card.id === "string" && !byId.has(card.id)) byId.set(card.id, card);
    }
  }
  return { object: "list", data: [...byId.values()] };
}
