/**
 * Changes a few top-level members of a JSON object body without serialising the rest again.
 * Agent requests carry their whole conversation (hundreds of KiB, mostly in `messages`) while
 * maitred changes only a handful of small members (`program_id` removed, `stream` and
 * `stream_options` set), so the body's bytes are copied around the changed members instead.
 *
 * Finding a member means walking the members before it, and walking `messages` means visiting
 * every quote inside it. The parsed body's key order tells where the changed members sit, so
 * members are read from whichever end of the object reaches them without crossing the others:
 * `{"messages": […], "model": "m", "program_id": "a"}` is read from the back, two small
 * members, and `messages` is copied untouched. When the key order does not match the bytes, or
 * a removed key's name shows up in the part not read (a key given twice), the whole object is
 * read from the front, which is always right.
 *
 * The body must be one JSON object the caller has already parsed successfully, so the scan can
 * trust its syntax. Outside a string every quote is a string's first or last; inside one every
 * quote is escaped; so strings can be skipped in either direction by searching for quotes.
 */

import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  escaped,
  isSpace,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  skipSpace,
  stringEnd,
} from "../util/json-bytes.ts";

/** Moves `end` (exclusive) back over whitespace. */
function skipSpaceBack(buf: Buffer, end: number): number {
  while (end > 0 && isSpace(buf[end - 1])) end--;
  return end;
}

/** Index of the opening quote of the string whose closing quote is at `q`. */
function stringStart(buf: Buffer, q: number): number {
  let p = buf.lastIndexOf(QUOTE, q - 1);
  while (p > 0 && escaped(buf, p)) p = buf.lastIndexOf(QUOTE, p - 1);
  return Math.max(0, p);
}

/** Index just past the value that starts at `i`. */
function valueEnd(buf: Buffer, i: number): number {
  const c = buf[i];
  if (c === QUOTE) return stringEnd(buf, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (let j = i; j < buf.length; j++) {
      const d = buf[j];
      if (d === QUOTE) j = stringEnd(buf, j) - 1;
      else if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if ((d === CLOSE_BRACE || d === CLOSE_BRACKET) && --depth === 0) return j + 1;
    }
    return buf.length;
  }
  let j = i;
  while (j < buf.length && buf[j] !== COMMA && buf[j] !== CLOSE_BRACE && !isSpace(buf[j])) j++;
  return j;
}

/** Index of the first byte of the value that ends just before `end`. */
function valueStart(buf: Buffer, end: number): number {
  const c = buf[end - 1];
  if (c === QUOTE) return stringStart(buf, end - 1);
  if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
    let depth = 0;
    for (let j = end - 1; j >= 0; j--) {
      const d = buf[j];
      if (d === QUOTE) j = stringStart(buf, j);
      else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) depth++;
      else if ((d === OPEN_BRACE || d === OPEN_BRACKET) && --depth === 0) return j;
    }
    return 0;
  }
  let j = end;
  while (j > 0 && buf[j - 1] !== COLON && !isSpace(buf[j - 1])) j--;
  return j;
}

/** The key of the string at `[start, end)`, escapes decoded. */
function keyOf(buf: Buffer, start: number, end: number): string {
  const raw = buf.toString("utf8", start + 1, end - 1);
  return raw.includes("\\") ? (JSON.parse(buf.toString("utf8", start, end)) as string) : raw;
}

/** A member `"key": value` at `[start, end)`. */
interface Member {
  key: string;
  start: number;
  end: number;
}

/** The member starting at `i` (its key's quote) and where the next one starts. */
function readForward(buf: Buffer, i: number): { member: Member; next: number } {
  const keyEnd = stringEnd(buf, i);
  const colon = skipSpace(buf, keyEnd);
  const end = valueEnd(buf, skipSpace(buf, colon + (buf[colon] === COLON ? 1 : 0)));
  let next = skipSpace(buf, end);
  if (buf[next] === COMMA) next = skipSpace(buf, next + 1);
  return { member: { key: keyOf(buf, i, keyEnd), start: i, end }, next };
}

/** The member ending just before `end` and where the one before it ends. */
function readBackward(buf: Buffer, end: number): { member: Member; previous: number } {
  const colon = skipSpaceBack(buf, valueStart(buf, end));
  const keyEnd = skipSpaceBack(buf, colon - 1);
  const start = stringStart(buf, keyEnd - 1);
  let previous = skipSpaceBack(buf, start);
  if (buf[previous - 1] === COMMA) previous = skipSpaceBack(buf, previous - 1);
  return { member: { key: keyOf(buf, start, keyEnd), start, end }, previous };
}

/** Every member, read from the front. */
function readAll(buf: Buffer): Member[] {
  const members: Member[] = [];
  let i = skipSpace(buf, skipSpace(buf, 0) + 1); // past `{`
  while (i < buf.length && buf[i] === QUOTE) {
    const { member, next } = readForward(buf, i);
    members.push(member);
    i = next;
  }
  return members;
}

/**
 * How many members to read from the front and from the back so that every changed key is
 * read and as few members as possible are: the split between two neighbouring changed keys
 * (in the body's key order) that leaves the fewest members outside.
 */
function plan(keys: readonly string[], changed: ReadonlySet<string>): [number, number] {
  const at: number[] = [];
  keys.forEach((k, i) => {
    if (changed.has(k)) at.push(i);
  });
  let best: [number, number] = [0, 0];
  let cost = Number.POSITIVE_INFINITY;
  for (let split = 0; split <= at.length; split++) {
    const front = split === 0 ? 0 : at[split - 1] + 1;
    const back = split === at.length ? 0 : keys.length - at[split];
    if (front + back < cost) {
      cost = front + back;
      best = [front, back];
    }
  }
  return best;
}

/**
 * Reads `front` members from the front and `back` from the back; null when the members found
 * there do not include every changed key (the key order did not match the bytes).
 */
function readEnds(
  buf: Buffer,
  keys: readonly string[],
  changed: ReadonlySet<string>,
  drop: ReadonlySet<string>,
  [front, back]: [number, number],
): { head: Member[]; middle: Buffer | null; tail: Member[] } | null {
  const head: Member[] = [];
  let i = skipSpace(buf, skipSpace(buf, 0) + 1);
  while (head.length < front && buf[i] === QUOTE) {
    const { member, next } = readForward(buf, i);
    head.push(member);
    i = next;
  }
  const tail: Member[] = [];
  let j = skipSpaceBack(buf, skipSpaceBack(buf, buf.length) - 1); // before `}`
  while (tail.length < back && j > i) {
    const { member, previous } = readBackward(buf, j);
    tail.unshift(member);
    j = previous;
  }
  const found = new Set([...head, ...tail].map((m) => m.key));
  for (const k of keys) if (changed.has(k) && !found.has(k)) return null;
  const middle = j > i ? buf.subarray(i, j) : null;
  // A removed key given twice may sit in the part not read; its name there (outside a string,
  // where a quote would be escaped) sends the reader to the front. A nested key of the same
  // name does too, which costs time, not correctness. A set key needs no such look: its new
  // member comes last, and JSON parsers (Python's, JavaScript's) keep the last of a key.
  if (middle !== null) for (const k of drop) if (middle.includes(JSON.stringify(k))) return null;
  return { head, middle, tail };
}

/**
 * `raw` with every top-level member named in `drop` or `put` removed, then `put`'s members
 * appended in order (values serialised with `JSON.stringify`). `keys` is the parsed body's
 * key order (`Object.keys`); without it the whole object is read.
 */
export function spliceTopLevel(
  raw: Buffer,
  drop: ReadonlySet<string>,
  put: ReadonlyArray<readonly [string, unknown]>,
  keys?: readonly string[],
): Buffer {
  const changed = new Set([...drop, ...put.map(([k]) => k)]);
  const ends = keys === undefined ? null : readEnds(raw, keys, changed, drop, plan(keys, changed));
  const pieces: Buffer[] = [];
  const keep = (members: Member[]) => {
    for (const m of members) if (!changed.has(m.key)) pieces.push(raw.subarray(m.start, m.end));
  };
  if (ends === null) keep(readAll(raw));
  else {
    keep(ends.head);
    if (ends.middle !== null) pieces.push(ends.middle);
    keep(ends.tail);
  }
  for (const [k, v] of put) pieces.push(Buffer.from(`${JSON.stringify(k)}:${JSON.stringify(v)}`));
  const parts: Buffer[] = [Buffer.from("{")];
  pieces.forEach((piece, n) => {
    if (n > 0) parts.push(Buffer.from(","));
    parts.push(piece);
  });
  parts.push(Buffer.from("}"));
  return Buffer.concat(parts);
}
