import { ConfigError } from "../errors.ts";
import { parseList, type ValueSource } from "./parse-value.ts";

/**
 * Where a request's program id may come from; the router tries them in the configured order
 * and the first match wins. Default order from the task: body `program_id` (ThunderAgent),
 * `extra_body.program_id` (OpenAI clients that do not merge extra_body), header `x-program-id`,
 * agent-harness session headers, Dynamo's
 * `nvext.agent_context.trajectory_id`.
 */
export const IDENTITY_SOURCES = [
  "program_id",
  "extra_body",
  "x-program-id",
  "session-headers",
  "nvext",
] as const;

export type IdentitySource = (typeof IDENTITY_SOURCES)[number];

export function parseIdentityOrder(raw: unknown, src: ValueSource): IdentitySource[] {
  const items = parseList(raw, src);
  const seen = new Set<string>();
  for (const item of items) {
    if (!(IDENTITY_SOURCES as readonly string[]).includes(item)) {
      throw new ConfigError(
        src.field,
        `unknown identity source ${JSON.stringify(item)}; known: ${IDENTITY_SOURCES.join(", ")} (from ${src.origin})`,
      );
    }
    if (seen.has(item)) {
      throw new ConfigError(
        src.field,
        `identity source listed twice: ${item} (from ${src.origin})`,
      );
    }
    seen.add(item);
  }
  return items as IdentitySource[];
}
