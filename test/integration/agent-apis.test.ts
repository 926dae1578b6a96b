import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

describe("agent-apis", () => {
  /**
   * The Anthropic Messages API (Claude Code's) and the OpenAI Responses API (Codex's, the Agents
   * SDK's) through maitred, with the official SDKs over HTTP, in front of two simulated vLLM
   * backends that serve both APIs. Router, ticks and engines run on one virtual clock: time
   * moves only when the sockets have settled, never by sleeping.
   */
  const MODEL = "meta-llama/Llama-3.1-8B-Instruct";
  const LS_SCHEMA = {
    type: "object" as const,
    properties: { path: { type: "string" } },
    required: ["path"],
  };

  let router: TestRouter;
  let anthropic: Anthropic;
  let openai: OpenAI;

  before(async () => {
    router = await startTestRouter({ backends: "sim:2" }, { virtualTime: true });
    anthropic = new Anthropic({ baseURL: router.url, apiKey: "sk-ant-test", maxRetries: 0 });
    openai = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "sk-test", maxRetries: 0 });
  });
  after(async () => {
    await router.close();
  });

  interface ProgramView {
    step_count: number;
    backend: string;
    likely_done_since: number | null;
    total_tokens: number;
  }

  async function program(id: string): Promise<ProgramView | null> {
    const res = await fetch(`${router.url}/programs/${encodeURIComponent(id)}`);
    return res.status === 404 ? null : ((await res.json()) as ProgramView);
  }

  async function programCount(): Promise<number> {
    const res = await fetch(`${router.url}/programs`);
    return Object.keys((await res.json()) as object).length;
  }

  test("a streamed Messages turn through the Anthropic SDK arrives whole and is booked to its Claude Code session", async () => {
    const session = "cc-session-stream";
    const stream = anthropic.messages.stream(
      { model: MODEL, max_tokens: 12, messages: [{ role: "user", content: "list the files" }] },
      { headers: { "x-claude-code-session-id": session } },
    );
    let text = "";
    stream.on("text", (t) => {
      text += t;
    });
    const message = await stream.finalMessage();
    assert.ok(text.length > 0, "text arrived");
    assert.equal(message.content[0]?.type, "text");
    assert.equal((message.content[0] as Anthropic.TextBlock).text, text);
    assert.ok(message.usage.input_tokens > 0 && message.usage.output_tokens > 0);
    const view = await program(session);
    assert.ok(view, "the session is a program");
    assert.equal(view.step_count, 1);
    assert.equal(view.total_tokens, message.usage.input_tokens + message.usage.output_tokens);
  });

  test("a plain Messages request with a forced tool is rebuilt as a Message with a tool_use block, and the program goes on; its text answer marks it likely done", async () => {
    const session = "cc-session-tools";
    const headers = { "x-claude-code-session-id": session };
    const first = await anthropic.messages.create(
      {
        model: MODEL,
        max_tokens: 64,
        messages: [{ role: "user", content: "look around" }],
        tools: [{ name: "ls", description: "list a directory", input_schema: LS_SCHEMA }],
        tool_choice: { type: "any" },
      },
      { headers },
    );
    assert.equal(first.stop_reason, "tool_use");
    const call = first.content.find((b) => b.type === "tool_use");
    assert.ok(call, `a tool_use block in ${JSON.stringify(first.content)}`);
    assert.equal(call.name, "ls");
    assert.equal(typeof (call.input as { path?: unknown }).path, "string", "input is parsed JSON");
    assert.equal((await program(session))?.likely_done_since, null, "a tool call is a step");

    const second = await anthropic.messages.create(
      {
        model: MODEL,
        max_tokens: 16,
        messages: [
          { role: "user", content: "look around" },
          { role: "assistant", content: first.content },
          {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: call.id, content: "a b c" }],
          },
        ],
      },
      { headers: { ...headers, "x-sim-finish": "stop" } },
    );
    assert.equal(second.stop_reason, "end_turn");
    const view = await program(session);
    assert.equal(view?.step_count, 2);
    assert.notEqual(view?.likely_done_since, null, "a final answer marks the program likely done");
  });

  test("a streamed tool call through the Anthropic SDK streams its input as JSON pieces", async () => {
    const stream = anthropic.messages.stream(
      {
        model: MODEL,
        max_tokens: 64,
        messages: [{ role: "user", content: "look" }],
        tools: [{ name: "ls", input_schema: LS_SCHEMA }],
        tool_choice: { type: "tool", name: "ls" },
      },
      { headers: { "x-claude-code-session-id": "cc-stream-tool" } },
    );
    const message = await stream.finalMessage();
    const block = message.content[0];
    assert.equal(block?.type, "tool_use");
    assert.equal(
      typeof ((block as Anthropic.ToolUseBlock).input as { path?: unknown }).path,
      "string",
    );
  });

  test("Claude Code's metadata.user_id names the program when no header does", async () => {
    await anthropic.messages.create({
      model: MODEL,
      max_tokens: 4,
      messages: [{ role: "user", content: "hi" }],
      metadata: {
        user_id: JSON.stringify({ device_id: "d", account_uuid: "", session_id: "cc-meta-1" }),
      },
    });
    assert.equal((await program("cc-meta-1"))?.step_count, 1);
  });

  test("count_tokens passes through to a backend", async () => {
    const counted = await anthropic.messages.countTokens({
      model: MODEL,
      messages: [{ role: "user", content: "count these words please" }],
    });
    assert.ok(counted.input_tokens > 0, JSON.stringify(counted));
  });

  test("a body maitred cannot read is a 400 in the Anthropic envelope and creates no program", async () => {
    const before = await programCount();
    const res = await fetch(`${router.url}/v1/messages?beta=true`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-claude-code-session-id": "cc-bad" },
      body: "{not json",
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, "error");
    assert.equal(body.error.type, "invalid_request_error");
    assert.match(body.error.message, /not valid JSON/);
    assert.equal(await programCount(), before);
    assert.equal(await program("cc-bad"), null);
  });

  test("the backend's own validation reaches the Anthropic SDK as its error", async () => {
    await assert.rejects(
      anthropic.messages.create({
        model: MODEL,
        messages: [{ role: "user", content: "x" }],
      } as never),
      (err: unknown) => {
        assert.ok(err instanceof Anthropic.BadRequestError, String(err));
        assert.equal(err.status, 400);
        assert.match(err.message, /max_tokens/);
        return true;
      },
    );
  });

  test("a streamed Responses request with a required function call streams a function_call item, booked to Codex's session-id", async () => {
    const session = "codex-session-1";
    const stream = await openai.responses.create(
      {
        model: MODEL,
        input: [{ role: "user", content: "look" }],
        tools: [{ type: "function", name: "ls", parameters: LS_SCHEMA, strict: false }],
        tool_choice: "required",
        store: false,
        stream: true,
      },
      { headers: { "session-id": session } },
    );
    let args = "";
    let completed: OpenAI.Responses.Response | null = null;
    for await (const event of stream) {
      if (event.type === "response.function_call_arguments.delta") args += event.delta;
      if (event.type === "response.completed") completed = event.response;
    }
    assert.ok(completed, "the stream completed");
    const item = completed.output[0];
    assert.equal(item?.type, "function_call");
    assert.equal((item as OpenAI.Responses.ResponseFunctionToolCall).arguments, args);
    assert.equal(typeof JSON.parse(args).path, "string");
    const view = await program(session);
    assert.equal(view?.step_count, 1);
    assert.equal(view?.likely_done_since, null);
  });

  test("a plain Responses request is rebuilt as the response object; prompt_cache_key names the program and a text answer marks it likely done", async () => {
    const response = await openai.responses.create(
      {
        model: MODEL,
        input: "say hi",
        max_output_tokens: 8,
        prompt_cache_key: "codex-pck",
        store: false,
      },
      { headers: { "x-sim-finish": "stop" } },
    );
    assert.equal(response.object, "response");
    assert.equal(response.status, "completed");
    assert.ok(response.output_text.length > 0);
    assert.ok((response.usage?.input_tokens ?? 0) > 0);
    const view = await program("codex-pck");
    assert.equal(view?.step_count, 1);
    assert.notEqual(view?.likely_done_since, null);
  });

  test("a previous_response_id chain is one program on the backend that stores it, and the stored response is read, refused a cancel and deleted there", async () => {
    const first = await openai.responses.create({
      model: MODEL,
      input: "start",
      max_output_tokens: 4,
      prompt_cache_key: "chain-1",
    });
    const home = (await program("chain-1"))?.backend;
    const second = await openai.responses.create({
      model: MODEL,
      input: "go on",
      max_output_tokens: 4,
      previous_response_id: first.id,
    });
    assert.equal(second.previous_response_id, first.id);
    const view = await program("chain-1");
    assert.equal(view?.step_count, 2, "the chain's second step is the same program");
    assert.equal(view?.backend, home);

    const got = await openai.responses.retrieve(second.id);
    assert.equal(got.id, second.id);
    await assert.rejects(openai.responses.cancel(second.id), (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError, String(err));
      return true;
    });
    await openai.responses.delete(second.id);
    await assert.rejects(openai.responses.retrieve(second.id), (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError, String(err));
      return true;
    });
  });

  test("a Responses body that is no object is a 400 in the OpenAI envelope and creates no program", async () => {
    const before = await programCount();
    const res = await fetch(`${router.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", "session-id": "codex-bad" },
      body: "[1]",
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: { code: string } };
    assert.equal(body.error.code, "bad_request");
    assert.equal(await programCount(), before);
  });

  test("a chat completion's prompt_cache_key names its program", async () => {
    await openai.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 3,
      prompt_cache_key: "chat-pck",
    });
    assert.equal((await program("chat-pck"))?.step_count, 1);
  });

  test("with --upstream-stream as-client a plain response is relayed whole, and its id still continues its program", async () => {
    const plainRouter = await startTestRouter(
      { backends: "sim:2", "upstream-stream": "as-client" },
      { virtualTime: true },
    );
    try {
      const client = new OpenAI({ baseURL: `${plainRouter.url}/v1`, apiKey: "k", maxRetries: 0 });
      const first = await client.responses.create({
        model: MODEL,
        input: "start",
        max_output_tokens: 4,
        prompt_cache_key: "as-client-chain",
      });
      await client.responses.create({
        model: MODEL,
        input: "go on",
        max_output_tokens: 4,
        previous_response_id: first.id,
      });
      const res = await fetch(`${plainRouter.url}/programs/as-client-chain`);
      assert.equal(((await res.json()) as ProgramView).step_count, 2);
    } finally {
      await plainRouter.close();
    }
  });
});
