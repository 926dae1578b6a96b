/** OpenAI completions (`POST /v1/completions`): one entry per prompt. */
import type { Json } from "../../util/json-object.ts";
import type { Dialect } from "./dialect.ts";
import { partChars } from "./message-chars.ts";
import { openAiDialect } from "./openai-dialect.ts";

function promptChars(body: Json): number[] {
  const prompt = body.prompt;
  if (typeof prompt === "string") return [prompt.length];
  if (Array.isArray(prompt)) {
    // A list of strings is several prompts; a list of numbers is one tokenised prompt.
    if (prompt.every((p) => typeof p === "number")) return [JSON.stringify(prompt).length];
    return prompt.map(partChars);
  }
  return [];
}

export const completions: Dialect = openAiDialect("completions", "/v1/completions", promptChars);
