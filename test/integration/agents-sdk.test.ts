import assert from "node:assert/strict";
import { test } from "node:test";
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from "@openai/agents";
import { z } from "zod";
import { startTestRouter } from "./helpers/test-router.ts";

/**
 * The OpenAI Agents SDK with its default model (the Responses API) through maitred in front of
 * two simulated backends: its agent loop calls a function tool, gets the tool's output back to
 * the model, and ends with a text answer, all one program (named by `prompt_cache_key`, which
 * the SDK passes through its model settings). Virtual time: nothing sleeps.
 */
test("an Agents SDK run through maitred calls its tool, finishes, and is followed as one program", async () => {
  setTracingDisabled(true);
  const router = await startTestRouter({ backends: "sim:2" }, { virtualTime: true });
  try {
    const calls: string[] = [];
    const ls = tool({
      name: "ls",
      description: "List a directory",
      parameters: z.object({ path: z.string() }),
      execute: async ({ path }) => {
        calls.push(path);
        return "README.md src test";
      },
    });
    const agent = new Agent({
      name: "looker",
      instructions: "Look at the repository, then say what is there.",
      model: "meta-llama/Llama-3.1-8B-Instruct",
      tools: [ls],
      // The first turn must call the tool; the SDK resets the choice to auto after it.
      modelSettings: {
        toolChoice: "required",
        providerData: { prompt_cache_key: "agents-sdk-run" },
      },
    });
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ baseURL: `${router.url}/v1`, apiKey: "sk-test" }),
      tracingDisabled: true,
    });
    const result = await runner.run(agent, "What is in this repository?", { maxTurns: 12 });
    assert.ok(calls.length >= 1, "the tool ran");
    assert.equal(typeof result.finalOutput, "string");
    const res = await fetch(`${router.url}/programs/agents-sdk-run`);
    assert.equal(res.status, 200, "one program for the whole run");
    const view = (await res.json()) as { step_count: number; likely_done_since: number | null };
    assert.equal(view.step_count, calls.length + 1, "one step per model call");
    assert.notEqual(view.likely_done_since, null, "its final text answer marks it likely done");
  } finally {
    await router.close();
  }
});
