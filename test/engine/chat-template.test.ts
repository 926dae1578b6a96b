import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type ChatMessage,
  chatPromptTokens,
  GENERATION_PROMPT_OVERHEAD,
  messageBody,
  OVERHEAD_PER_MESSAGE,
  renderChat,
} from "../../src/engine/chat-template.ts";
import { countTokens, encode, textOfTokens } from "../../src/engine/tokenizer.ts";
import { MaitredError } from "../../src/errors.ts";

const conversation: ChatMessage[] = [
  { role: "system", content: "You are a coding agent." },
  { role: "user", content: "Fix the failing test in src/app.ts." },
  {
    role: "assistant",
    content: "Let me look.",
    tool_calls: [
      { id: "c1", type: "function", function: { name: "bash", arguments: '{"cmd":"ls"}' } },
    ],
  },
  { role: "tool", tool_call_id: "c1", content: "app.ts\napp.test.ts\n" },
];

describe("chat template", () => {
  it("costs exactly OVERHEAD_PER_MESSAGE per message plus the generation prompt", () => {
    const body = conversation.reduce((n, m) => n + countTokens(messageBody(m)), 0);
    const want = conversation.length * OVERHEAD_PER_MESSAGE + body + GENERATION_PROMPT_OVERHEAD;
    assert.equal(chatPromptTokens(conversation, { addGenerationPrompt: true }).length, want);
  });

  it("lets a generator build a prompt of an exact token count from textOfTokens", () => {
    const messages: ChatMessage[] = [
      { role: "system", content: textOfTokens(300, 1) },
      { role: "user", content: textOfTokens(120, 2) },
    ];
    const want = 300 + 120 + 2 * OVERHEAD_PER_MESSAGE + GENERATION_PROMPT_OVERHEAD;
    assert.equal(chatPromptTokens(messages, { addGenerationPrompt: true }).length, want);
  });

  it("shares the previous turn's whole prompt as a token prefix when messages are appended", () => {
    for (let k = 1; k < conversation.length; k++) {
      const before = chatPromptTokens(conversation.slice(0, k));
      const after = chatPromptTokens(conversation.slice(0, k + 1));
      assert.deepEqual(after.slice(0, before.length), before, `turn ${k}`);
    }
  });

  it("puts the generation prompt at the start of the assistant message that answers it", () => {
    const head = conversation.slice(0, 2);
    const prompt = chatPromptTokens(head, { addGenerationPrompt: true });
    const next = chatPromptTokens(conversation.slice(0, 3));
    assert.deepEqual(next.slice(0, prompt.length), prompt);
  });

  it("encodes the rendered text to exactly the template's token ids", () => {
    const opts = { addGenerationPrompt: true };
    assert.deepEqual(encode(renderChat(conversation, opts)), chatPromptTokens(conversation, opts));
  });

  it("concatenates the text parts of array content and ignores other parts", () => {
    const parts: ChatMessage = {
      role: "user",
      content: [
        { type: "text", text: "Describe" },
        { type: "image_url" },
        { type: "text", text: " this." },
      ],
    };
    assert.deepEqual(
      chatPromptTokens([parts]),
      chatPromptTokens([{ role: "user", content: "Describe this." }]),
    );
  });

  it("renders tool calls deterministically after the content", () => {
    assert.equal(
      messageBody(conversation[2]),
      'Let me look.\n<tool_call>\n{"name":"bash","arguments":"{\\"cmd\\":\\"ls\\"}"}\n</tool_call>',
    );
  });

  it("treats null content as empty and developer like system", () => {
    assert.equal(messageBody({ role: "assistant", content: null }), "");
    assert.deepEqual(
      chatPromptTokens([{ role: "developer", content: "x" }]),
      chatPromptTokens([{ role: "system", content: "x" }]),
    );
  });

  it("rejects an unknown role with a 400 naming messages", () => {
    assert.throws(
      () => chatPromptTokens([{ role: "wizard", content: "hi" }]),
      (e: unknown) => e instanceof MaitredError && e.status === 400 && e.param === "messages",
    );
  });
});
