/**
 * Simulated logprobs and their two vLLM shapes. Every value is a pure function of the choice's
 * key and the token's position in the output, so a token gets the same logprobs streamed or
 * not. The simulated model decodes greedily: the chosen token is the most likely one, listed
 * first among the top logprobs, the alternatives (other word pieces) after it in falling
 * order, as vLLM lists a greedy sample first.
 *
 * How many entries the top list holds follows vLLM: chat's `top_logprobs: k` lists k (none
 * for 0); completions' `logprobs: k` lists k, but at least the chosen token (vLLM keeps
 * "k + 1" entries of a table that holds the sampled token plus the top k, the sampled one
 * among them when it is the likeliest).
 *
 * Values have six decimals and are never whole numbers, so JavaScript prints them as Python
 * prints the same floats.
 */

import { combine32, unitInterval } from "../engine/hash.ts";
import { WORD_PIECES } from "../engine/word-list.ts";

export interface TokenLogprob {
  token: string;
  logprob: number;
  /** The chosen token first, then alternatives; each shape takes as many as it lists. */
  top: Array<{ token: string; logprob: number }>;
}

const LOGPROB_SALT = 0x3c6e_f372;

function sixDecimals(x: number): number {
  const micro = Math.round(x * 1e6);
  // A whole number would print as "-2" here and "-2.0" in Python.
  return (micro % 1_000_000 === 0 ? micro - 1 : micro) / 1e6;
}

/** Top entries to draw for `top` asked: the chosen token always, so both shapes can list it. */
export const listedFor = (top: number) => Math.max(1, top);

/** Logprobs of the token at `position` of a choice's output, `listed` top entries in all. */
export function tokenLogprob(
  key: number,
  position: number,
  token: string,
  listed: number,
): TokenLogprob {
  const seed = combine32(key ^ LOGPROB_SALT, position);
  let draws = 0;
  const next = () => combine32(seed, draws++);
  let logprob = sixDecimals(-(0.0002 + 1.5 * unitInterval(next()) ** 2));
  const top = [{ token, logprob }];
  const used = new Set([token]);
  while (top.length < listed && used.size < WORD_PIECES.length) {
    const candidate = WORD_PIECES[next() % WORD_PIECES.length];
    if (used.has(candidate)) continue;
    used.add(candidate);
    logprob = sixDecimals(logprob - (0.01 + 1.5 * unitInterval(next())));
    top.push({ token: candidate, logprob });
  }
  return { token, logprob: top[0].logprob, top };
}

const utf8 = new TextEncoder();
const bytesJson = (text: string) => `[${utf8.encode(text).join(",")}]`;
const entryJson = (token: string, logprob: number) =>
  `{"token":${JSON.stringify(token)},"logprob":${logprob},"bytes":${bytesJson(token)}`;

/** Chat's `{"content":[...]}` for these tokens, with `top` alternatives listed per token. */
export function chatLogprobsJson(entries: readonly TokenLogprob[], top: number): string {
  const content = entries.map((e) => {
    const listed = e.top.slice(0, top).map((t) => `${entryJson(t.token, t.logprob)}}`);
    return `${entryJson(e.token, e.logprob)},"top_logprobs":[${listed.join(",")}]}`;
  });
  return `{"content":[${content.join(",")}]}`;
}

/** Python's len(): code points, which the offsets count. */
const codePoints = (text: string) => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

/** The characters these tokens span, to carry text offsets across stream chunks. */
export function textLength(entries: readonly TokenLogprob[]): number {
  let n = 0;
  for (const e of entries) n += codePoints(e.token);
  return n;
}

/** Completions' four parallel lists; `offset` is where the first token starts in the text. */
export function completionLogprobsJson(
  entries: readonly TokenLogprob[],
  top: number,
  offset: number,
): string {
  const offsets: number[] = [];
  let at = offset;
  for (const e of entries) {
    offsets.push(at);
    at += codePoints(e.token);
  }
  const listed = entries.map((e) => {
    const pairs = e.top
      .slice(0, listedFor(top))
      .map((t) => `${JSON.stringify(t.token)}:${t.logprob}`);
    return `{${pairs.join(",")}}`;
  });
  return `{"text_offset":[${offsets.join(",")}],"token_logprobs":[${entries.map((e) => e.logprob).join(",")}],"tokens":[${entries.map((e) => JSON.stringify(e.token)).join(",")}],"top_logprobs":[${listed.join(",")}]}`;
}
