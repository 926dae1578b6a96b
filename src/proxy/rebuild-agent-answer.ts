/**
 * The plain-answer rebuild of a Messages or Responses stream, by the dialect's name: the
 * dialects' own (dialects/named-event-rebuild.ts) for callers that hold a name rather than a
 * dialect, such as scripts/bench-events.ts and its tests.
 */
import { DIALECTS } from "./dialects/all-dialects.ts";
import type { AnswerRebuilder, ContentHooks } from "./dialects/dialect.ts";

export type AgentRebuilder = AnswerRebuilder;

export function createAgentRebuilder(
  dialect: "messages" | "responses",
  hooks: ContentHooks,
): AgentRebuilder {
  // Neither dialect's answer depends on the backend type or a tool choice.
  return DIALECTS[dialect].rebuild({ flavour: "vllm", toolCallContent: null }, hooks);
}
