/**
 * What an answer says, streamed or not, in one comparable form: per choice the text, the tool
 * calls (name and arguments), the finish reason and the logprobs, plus the usage. A stream is
 * joined the way a client joins it; ids and `created` are left out, as they differ by design.
 */

import { type Json, sseData } from "./helpers.ts";

export interface ChoiceContent {
  index: number;
  /** Chat: the content joined (null and "" both read as ""); completions: the text. */
  text: string;
  toolCalls: Array<{ name: string; arguments: string }>;
  finish: string | null;
  logprobs: Json | null;
}

export interface AnswerContent {
  choices: ChoiceContent[];
  usage: Json;
}

function mergeLogprobs(into: Json | null, piece: Json | null): Json | null {
  if (piece === null || piece === undefined) return into;
  const out: Json = into ?? {};
  for (const [k, v] of Object.entries(piece)) out[k] = [...(out[k] ?? []), ...(v as unknown[])];
  return out;
}

/** The usage without an unreported `prompt_tokens_details` (a plain body prints it null). */
function usageOf(usage: Json): Json {
  const { prompt_tokens_details, ...rest } = usage;
  return prompt_tokens_details === null ? rest : usage;
}

export function contentOfStream(sse: string): AnswerContent {
  const events = sseData(sse);
  if (events.at(-1) !== "[DONE]") throw new Error("stream did not end with [DONE]");
  const choices: ChoiceContent[] = [];
  let usage: Json = null;
  for (const e of events.slice(0, -1)) {
    const chunk = JSON.parse(e);
    if (chunk.usage) usage = usageOf(chunk.usage);
    for (const c of chunk.choices) {
      choices[c.index] ??= {
        index: c.index,
        text: "",
        toolCalls: [],
        finish: null,
        logprobs: null,
      };
      const choice = choices[c.index];
      choice.text += c.text ?? c.delta?.content ?? "";
      for (const call of c.delta?.tool_calls ?? []) {
        const at =
          choice.toolCalls.length === 0 || call.id !== undefined
            ? choice.toolCalls.length
            : choice.toolCalls.length - 1;
        choice.toolCalls[at] ??= { name: "", arguments: "" };
        choice.toolCalls[at].name += call.function?.name ?? "";
        choice.toolCalls[at].arguments += call.function?.arguments ?? "";
      }
      choice.logprobs = mergeLogprobs(choice.logprobs, c.logprobs);
      choice.finish = c.finish_reason ?? choice.finish;
    }
  }
  return { choices, usage };
}

export function contentOfBody(body: Json): AnswerContent {
  return {
    choices: body.choices.map((c: Json) => ({
      index: c.index,
      text: c.text ?? c.message?.content ?? "",
      toolCalls: (c.message?.tool_calls ?? []).map((t: Json) => ({
        name: t.function.name,
        arguments: t.function.arguments,
      })),
      finish: c.finish_reason,
      logprobs: c.logprobs,
    })),
    usage: usageOf(body.usage),
  };
}

/** The same request answered as a stream (with the usage chunk) and as one body. */
export async function bothAnswers(
  url: string,
  body: Record<string, unknown>,
): Promise<{ stream: string; plain: Json }> {
  const post = (b: unknown) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(b),
    });
  const streamed = await post({ ...body, stream: true, stream_options: { include_usage: true } });
  if (streamed.status !== 200)
    throw new Error(`stream: ${streamed.status} ${await streamed.text()}`);
  const stream = await streamed.text();
  const plainRes = await post(body);
  if (plainRes.status !== 200)
    throw new Error(`plain: ${plainRes.status} ${await plainRes.text()}`);
  return { stream, plain: await plainRes.json() };
}
