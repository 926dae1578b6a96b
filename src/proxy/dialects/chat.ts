/** OpenAI chat completions (`POST /v1/chat/completions`): one entry per message. */
import type { Dialect } from "./dialect.ts";
import { listChars } from "./message-chars.ts";
import { openAiDialect } from "./openai-dialect.ts";

export const chat: Dialect = openAiDialect("chat", "/v1/chat/completions", (body) =>
  listChars([], body.messages),
);
