import type { Usage } from "../core/events.ts";
import { skipSpace } from "../util/json-bytes.ts";
import { asObj } from "../util/json-object.ts";
import { messageIsFinal } from "./dialects/messages-events.ts";
import { responseIsFinal, responsesUsage } from "./dialects/responses-events.ts";

/** OpenAI `usage` → the core's Usage; null when absent or malformed. */
export function usageFrom(doc: unknown): Usage | null {
  if (!doc || typeof doc !== "object") return null;
  const u = (doc as { usage?: unknown }).usage;
  if (!u || typeof u !== "object") return null;
  const { prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details } = u as Record<
    string,
    unknown
  >;
  if (typeof prompt_tokens !== "number" || typeof completion_tokens !== "number")
    return agentUsage(u as Record<string, unknown>);
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

/**
 * The Messages and Responses usage (`input_tokens`, `output_tokens`): a Message's prompt is
 * its input plus its cache reads and writes (Anthropic counts them apart).
 */
function agentUsage(u: Record<string, unknown>): Usage | null {
  const read = u.cache_read_input_tokens;
  if (read === undefined && u.cache_creation_input_tokens === undefined) return responsesUsage(u);
  const r = typeof read === "number" ? read : 0;
  const w = typeof u.cache_creation_input_tokens === "number" ? u.cache_creation_input_tokens : 0;
  const base = responsesUsage(u);
  if (base === null) return null;
  const prompt = base.promptTokens + r + w;
  return {
    promptTokens: prompt,
    completionTokens: base.completionTokens,
    totalTokens: prompt + base.completionTokens,
    cachedTokens: r,
  };
}

/** Usage from a JSON body, parsing only the `usage` object when it can be found cheaply. */
export function usageOfBody(body: Buffer): Usage | null {
  const at = body.lastIndexOf('"usage"');
  if (at >= 0) {
    // Escaped quotes inside strings (\"usage\") cannot match; require `"usage" : {`.
    let open = skipSpace(body, at + 7);
    if (body[open] === 0x3a) open = skipSpace(body, open + 1); // ':'
    if (body[open] === 0x7b) {
      // Usage objects nest at most one level (prompt_tokens_details); find the matching brace.
      let depth = 0;
      for (let i = open; i < body.length; i++) {
        const c = body[i];
        if (c === 0x7b) depth++;
        else if (c === 0x7d && --depth === 0) {
          try {
            return usageFrom({ usage: JSON.parse(body.toString("utf8", open, i + 1)) });
          } catch {
            break;
          }
        }
      }
    }
  }
  try {
    return usageFrom(JSON.parse(body.toString("utf8")));
  } catch {
    return null;
  }
}

/**
 * Whether a whole answer ended as a final answer does: every choice's `finish_reason` is
 * `stop` and none carries a tool or function call. False for anything that is not such an
 * answer (an error, malformed JSON).
 */
export function stoppedOfBody(body: Buffer): boolean {
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString("utf8"));
  } catch {
    return false;
  }
  const whole = asObj(doc);
  if (whole?.object === "response") return responseIsFinal(whole);
  if (whole?.type === "message") return messageIsFinal(whole);
  const choices = (doc as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices) || choices.length === 0) return false;
  for (const c of choices) {
    if (typeof c !== "object" || c === null || c.finish_reason !== "stop") return false;
    const m = c.message;
    if (typeof m === "object" && m !== null) {
      if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) return false;
      if (typeof m.function_call === "object" && m.function_call !== null) return false;
    }
  }
  return true;
}
