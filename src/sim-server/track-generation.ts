/**
 * One request's life on the engine, shared by the streaming and the JSON responses: submit
 * one engine request per choice, turn each step's output into token texts, stop on an
 * injected mid-stream error, and end exactly once whichever way it ends (every choice
 * finished, injected error, client gone).
 */

import { decodeToken } from "../engine/tokenizer.ts";
import type { FinishReason, RequestOutput } from "../engine/types.ts";
import { Errors, type MaitredError } from "../errors.ts";
import type { EngineDriver } from "./engine-driver.ts";
import { STREAM_ERROR_STATUS } from "./failure-injection.ts";
import type { UsageCounts } from "./openai-shapes.ts";
import type { ChoicePlan, GenerationSpec } from "./prepare-generation.ts";
import type { RequestObserver } from "./request-observer.ts";

/** One engine step's output for one choice. */
export interface ChoiceStep {
  choice: ChoicePlan;
  /** Position of the step's first token in the choice's output. */
  position: number;
  /** The text of each token of the step. */
  pieces: string[];
  /** Set on the choice's last step. */
  finish: FinishReason | null;
}

export interface GenerationSink {
  /** One choice's step; `first` on the request's first output of any choice. */
  step(step: ChoiceStep, first: boolean): void;
  /** Every choice has finished; `usage` counts the prompt once and every choice's tokens. */
  finished(usage: UsageCounts): void;
  /** The injected mid-stream failure: the response must end with this error. */
  fail(error: MaitredError): void;
}

export interface Generation {
  /** The client is gone: abort the engine requests (no-op once ended). */
  cancel(): void;
}

export interface GenerationDeps {
  driver: EngineDriver;
  observer: RequestObserver;
  /** --enable-prompt-tokens-details. */
  reportCachedTokens: boolean;
}

/** A forced output's tokens are the pieces it was cut into; sampled ones decode. */
function piecesOf(choice: ChoicePlan, position: number, ids: readonly number[]): string[] {
  const forced = choice.toolCall?.pieces;
  return forced !== undefined
    ? forced.slice(position, position + ids.length)
    : ids.map((id) => decodeToken(id));
}

export function startGeneration(
  deps: GenerationDeps,
  spec: GenerationSpec,
  sink: GenerationSink,
): Generation {
  const { driver, observer } = deps;
  const promptTokens = spec.promptTokens.length;
  const n = spec.choices.length;
  const produced = new Array<number>(n).fill(0);
  const lastTokenTime = new Array<number>(n).fill(0);
  const done = new Array<boolean>(n).fill(false);
  let ended = false;
  let total = 0;
  let finishedChoices = 0;
  // vLLM reports the cached prompt tokens of the request's first output.
  let cachedTokens: number | null = null;
  let arrivalTime = 0;

  const end = (aborted: boolean) => {
    if (ended) return;
    ended = true;
    if (!aborted) return;
    for (const c of spec.choices) {
      if (done[c.index]) continue;
      driver.abort(c.engineId);
      observer.aborted();
    }
  };

  const finish = (i: number, time: number, output: RequestOutput) => {
    done[i] = true;
    finishedChoices++;
    observer.finished({
      promptTokens,
      completionTokens: produced[i],
      cachedTokens: output.numCachedTokens,
      e2eSeconds: time - arrivalTime,
    });
  };

  const onOutput = (choice: ChoicePlan, output: RequestOutput, time: number) => {
    if (ended || (output.newTokenIds.length === 0 && output.finishReason === undefined)) return;
    // The injected error counts the tokens of every choice.
    const limit = spec.streamErrorAfter;
    if (limit !== null && total >= limit && output.finishReason === undefined) {
      end(true);
      sink.fail(Errors.injected(STREAM_ERROR_STATUS));
      return;
    }
    const i = choice.index;
    const position = produced[i];
    if (position === 0) observer.firstToken(time - arrivalTime);
    else observer.interToken(time - lastTokenTime[i]);
    lastTokenTime[i] = time;
    produced[i] += output.newTokenIds.length;
    total += output.newTokenIds.length;
    const first = cachedTokens === null;
    if (first) cachedTokens = output.numCachedTokens;
    const reason = output.finishReason ?? null;
    if (reason !== null) finish(i, time, output);
    if (finishedChoices === n) ended = true;
    const pieces = piecesOf(choice, position, output.newTokenIds);
    sink.step({ choice, position, pieces, finish: reason }, first);
    if (finishedChoices === n) {
      const cached = deps.reportCachedTokens && cachedTokens! > 0 ? cachedTokens : null;
      sink.finished({ promptTokens, completionTokens: total, cachedTokens: cached });
    }
  };

  // Every choice is submitted before the Response exists, so an engine rejection is still a
  // plain 4xx; the choices share the prompt, so the engine accepts all of them or none.
  for (const choice of spec.choices) {
    arrivalTime = driver.submit(
      {
        id: choice.engineId,
        promptTokens: spec.promptTokens,
        maxTokens: spec.maxTokens,
        minTokens: spec.minTokens,
        ignoreEos: spec.ignoreEos,
        sampleIndex: choice.index,
        ...(spec.priority !== null && { priority: spec.priority }),
        ...(choice.toolCall !== null && { forcedOutput: choice.toolCall.tokenIds }),
      },
      { onOutput: (output, time) => onOutput(choice, output, time) },
    );
  }

  return { cancel: () => end(true) };
}
