/**
 * The relay of a Messages or Responses stream, by the dialect's name: the dialects' own relay
 * (dialects/named-event-relay.ts) for callers that hold a name rather than a dialect, such as
 * scripts/bench-events.ts and its tests.
 */
import { DIALECTS } from "./dialects/all-dialects.ts";
import type { AnswerRelay, ContentHooks } from "./dialects/dialect.ts";

export type AgentSseRelay = AnswerRelay;

export function createAgentSseRelay(
  dialect: "messages" | "responses",
  hooks: ContentHooks,
): AgentSseRelay {
  return DIALECTS[dialect].relay(true, hooks);
}
