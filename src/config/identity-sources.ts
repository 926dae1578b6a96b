import { z } from "zod";
import { list, shaped } from "./values.ts";

/**
 * Where a request's program id may come from; the router tries them in the configured order
 * and the first match wins. Default order: body `program_id` (ThunderAgent),
 * `extra_body.program_id` (OpenAI clients that do not merge extra_body), header `x-program-id`,
 * agent-harness session headers (Claude Code's `x-claude-code-session-id`, Codex's
 * `session-id`, …), the `session_id` in a Messages request's `metadata.user_id` (Claude Code),
 * a Responses `previous_response_id` (the program of the response it continues), the body's
 * `prompt_cache_key` (Codex sets its session id there; chat completions may carry one too), and
 * Dynamo's `nvext.agent_context.trajectory_id`.
 */
export const IDENTITY_SOURCES = [
  "program_id",
  "extra_body",
  "x-program-id",
  "session-headers",
  "metadata",
  "previous_response_id",
  "prompt_cache_key",
  "nvext",
] as const;

export type IdentitySource = (typeof IDENTITY_SOURCES)[number];

/** `--identity-order`: known sources, each at most once. */
export const identityOrderSchema = shaped(
  list()
    .superRefine((items, ctx) => {
      const seen = new Set<string>();
      for (const item of items) {
        if (!(IDENTITY_SOURCES as readonly string[]).includes(item)) {
          ctx.addIssue({
            code: "custom",
            message: `unknown identity source ${JSON.stringify(item)}; known: ${IDENTITY_SOURCES.join(", ")}`,
          });
        } else if (seen.has(item)) {
          ctx.addIssue({ code: "custom", message: `identity source listed twice: ${item}` });
        }
        seen.add(item);
      }
    })
    // Checked above: every item is a known source.
    .transform((items) => items as IdentitySource[]),
  z.union([
    z.string().min(1),
    z.array(z.enum(IDENTITY_SOURCES)).min(1).meta({ uniqueItems: true }),
  ]),
);
