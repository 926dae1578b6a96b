/**
 * Characters per message, the core's token estimate input, for the dialects whose requests are
 * a list of messages or items (chat, Messages, Responses): a message's content (a string or
 * parts) and its tool calls, an item's arguments or output, a system prompt as one message.
 */
import type { Json } from "../../util/json-object.ts";

export function partChars(part: unknown): number {
  if (typeof part === "string") return part.length;
  if (part && typeof part === "object" && typeof (part as Json).text === "string") {
    return ((part as Json).text as string).length;
  }
  return JSON.stringify(part ?? "").length;
}

/** Characters of a message or item: its content (a string or parts) and its tool calls. */
export function itemChars(m: unknown): number {
  if (!m || typeof m !== "object") return typeof m === "string" ? m.length : 0;
  const msg = m as Json;
  let n = 0;
  if (typeof msg.content === "string") n += msg.content.length;
  else if (Array.isArray(msg.content)) for (const p of msg.content) n += partChars(p);
  if (Array.isArray(msg.tool_calls)) n += JSON.stringify(msg.tool_calls).length;
  // Responses items other than messages: a call's arguments, a call's output.
  if (typeof msg.arguments === "string") n += msg.arguments.length;
  if (typeof msg.output === "string") n += msg.output.length;
  return n;
}

/** The system prompt or instructions, a string or text blocks, as one message's characters. */
export function systemChars(v: unknown): number[] {
  if (typeof v === "string") return v === "" ? [] : [v.length];
  if (!Array.isArray(v)) return [];
  let n = 0;
  for (const p of v) n += partChars(p);
  return [n];
}

/** `head` (a system prompt's characters, or none) and one entry per message of `messages`. */
export function listChars(head: number[], messages: unknown): number[] {
  if (!Array.isArray(messages)) return head;
  return [...head, ...messages.map(itemChars)];
}
