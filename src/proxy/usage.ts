import type { Usage } from "../core/events.ts";

/** OpenAI `usage` → the core's Usage; null when absent or malformed. */
export function usageFrom(doc: unknown): Usage | null {
  if (!doc || typeof doc !== "object") return null;
  const u = (doc as { usage?: unknown }).usage;
  if (!u || typeof u !== "object") return null;
  const { prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details } = u as Record<
    string,
    unknown
  >;
  if (typeof prompt_tokens !== "number" || typeof completion_tokens !== "number") return null;
  const usage: Usage = {
    promptTokens: prompt_tokens,
    completionTokens: completion_tokens,
    totalTokens:
      typeof total_tokens === "number" ? total_tokens : prompt_tokens + completion_tokens,
  };
  const cached = (prompt_tokens_details as { cached_tokens?: unknown } | null | undefined)
    ?.cached_tokens;
  if (typeof cached === "number") usage.cachedTokens = cached;
  return usage;
}
