import type { ProgramRecord } from "./records.ts";
import type { TokenEstimator } from "./token-estimator.ts";

/** Characters per message, cleaned: bad numbers count as empty rather than corrupt the books. */
export function cleanChars(messageChars: readonly number[]): number[] {
  return messageChars.map((c) => (Number.isFinite(c) && c > 0 ? c : 0));
}

function sumFrom(chars: readonly number[], start: number): number {
  let sum = 0;
  for (let i = start; i < chars.length; i++) sum += chars[i];
  return sum;
}

/**
 * Tokens of a request's context before the engine answers. The original re-estimated the whole
 * payload on every turn, overwriting the exact count; here the engine's
 * last total is kept and only what is new is estimated. Cases:
 *   1. no usage seen yet for the program (or anonymous): all characters over the ratio;
 *   2. the request extends the conversation the last usage covered (at least as many
 *      messages): last known total + the new messages' characters over the ratio;
 *   3. fewer messages (a completions prompt, or a rewritten/compacted history): estimate
 *      afresh from all characters.
 */
export function estimateContextTokens(
  p: ProgramRecord | null,
  chars: readonly number[],
  estimator: TokenEstimator,
): number {
  if (p === null || p.countedMessages === 0) return estimator.tokensFor(sumFrom(chars, 0));
  if (chars.length >= p.countedMessages) {
    return p.knownTokens + estimator.tokensFor(sumFrom(chars, p.countedMessages));
  }
  return estimator.tokensFor(sumFrom(chars, 0));
}

/**
 * Messages covered once a request's usage is known: its own messages plus the assistant
 * reply, which `usage.completion_tokens` already counts and which the next turn carries.
 */
export function messagesCoveredByUsage(messageCount: number): number {
  return messageCount + 1;
}
