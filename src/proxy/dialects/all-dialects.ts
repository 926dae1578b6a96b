/** Every dialect maitred speaks, by name, and the one a path belongs to. */
import { chat } from "./chat.ts";
import { completions } from "./completions.ts";
import type { Dialect, DialectName } from "./dialect.ts";
import { messages } from "./messages.ts";
import { responses } from "./responses.ts";

export const DIALECTS: Readonly<Record<DialectName, Dialect>> = {
  chat,
  completions,
  messages,
  responses,
};

/** In the order their routes are registered. */
export const DIALECT_LIST: readonly Dialect[] = [chat, completions, messages, responses];

/**
 * The dialect whose routes `path` is one of (its generation route or a route under it, such as
 * `/v1/messages/count_tokens`); chat's, the OpenAI envelope, for every other path.
 */
export function dialectOfPath(path: string): Dialect {
  for (const d of DIALECT_LIST)
    if (path.startsWith(d.path) && (path.length === d.path.length || path[d.path.length] === "/"))
      return d;
  return chat;
}
