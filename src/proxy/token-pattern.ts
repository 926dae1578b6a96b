/**
 * The fast path of a rebuilt plain answer (rebuild-completion.ts): a token's event is, byte for
 * byte, the previous token's event with another text in it (same id, model, choice index,
 * nulls). When the last event parsed whole has that shape (one choice; its delta's `content`,
 * or a legacy `text`, the only member that grows; every other member null or a plain value),
 * the next events are compared with it around that text (two native compares) and only the
 * text is decoded. Profiles showed the full parse and merge of every event as most of what a
 * rebuilt answer cost.
 */
import { BACKSLASH, QUOTE, stringEnd } from "../util/json-bytes.ts";
import { asObj, type Json } from "../util/json-object.ts";

/** A token's event but for its text: the bytes around the text, and where the text goes. */
export interface TokenPattern {
  head: Buffer;
  tail: Buffer;
  index: number;
  key: "content" | "text";
}

/** Where a token's text starts in its event, for chat and legacy completions. */
const TEXT_AT = {
  chat: Buffer.from('"content":"'),
  completions: Buffer.from('"text":"'),
};

/** A plain JSON value: no object or array, whose pieces the merge would append. */
const scalar = (v: unknown) => v === null || typeof v !== "object";

/**
 * The event as the pattern of the next ones: the bytes before its text and after it. Null
 * unless the parsed event is one choice whose only growing part is that text (see the top).
 */
export function tokenPattern(
  chat: boolean,
  event: Json,
  buf: Buffer,
  from: number,
  end: number,
): TokenPattern | null {
  for (const k in event) if (k !== "choices" && !scalar(event[k])) return null;
  const list = event.choices;
  if (!Array.isArray(list) || list.length !== 1) return null;
  const choice = asObj(list[0]);
  if (choice === undefined) return null;
  let text: unknown;
  for (const k in choice) {
    if (k === "delta" && chat) {
      // Members the merge ignores when null (SGLang sends role, reasoning and tool calls as null).
      const delta = asObj(choice.delta);
      if (delta === undefined || typeof delta.content !== "string") return null;
      for (const d in delta) if (d !== "content" && delta[d] !== null) return null;
      text = delta.content;
    } else if (k === "text" && !chat) {
      if (typeof choice.text !== "string") return null;
      text = choice.text;
    } else if (
      !scalar(choice[k]) ||
      (k === "finish_reason" && choice[k] !== null) ||
      // A chat choice's string `text` is joined per event too: not a fixed member.
      (k === "text" && typeof choice[k] === "string")
    )
      return null;
  }
  if (text === undefined) return null;
  // The one place the text's key appears, and the parsed text there: nothing else in the event
  // can be mistaken for it.
  const mark = chat ? TEXT_AT.chat : TEXT_AT.completions;
  const at = buf.indexOf(mark, from);
  if (at < 0 || at >= end) return null;
  const again = buf.indexOf(mark, at + 1);
  if (again >= 0 && again < end) return null;
  const open = at + mark.length;
  const close = stringEnd(buf, open - 1) - 1;
  if (close >= end || buf[close] !== QUOTE) return null;
  try {
    if (JSON.parse(buf.toString("utf8", open - 1, close + 1)) !== text) return null;
  } catch {
    return null;
  }
  return {
    head: Buffer.from(buf.subarray(from, open)),
    tail: Buffer.from(buf.subarray(close, end)),
    index: typeof choice.index === "number" ? choice.index : 0,
    key: chat ? "content" : "text",
  };
}

/**
 * The text of the event in `buf[from, end)` when it is `pattern` with another JSON string as
 * its text; undefined when it is anything else.
 */
export function patternText(
  pattern: TokenPattern,
  buf: Buffer,
  from: number,
  end: number,
): string | undefined {
  const { head, tail } = pattern;
  const open = from + head.length;
  const close = end - tail.length;
  if (close < open) return undefined;
  if (buf.compare(head, 0, head.length, from, open) !== 0) return undefined;
  if (buf.compare(tail, 0, tail.length, close, end) !== 0) return undefined;
  let plain = true;
  for (let i = open; i < close; i++) {
    const c = buf[i];
    if (c === QUOTE || c === BACKSLASH || c < 0x20) {
      plain = false;
      break;
    }
  }
  if (plain) return buf.toString("utf8", open, close);
  // Escapes, or quotes that might end the string early: exactly one JSON string, or no match.
  try {
    const text: unknown = JSON.parse(buf.toString("utf8", open - 1, close + 1));
    return typeof text === "string" ? text : undefined;
  } catch {
    return undefined;
  }
}
