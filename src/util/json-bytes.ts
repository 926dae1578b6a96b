/** Byte values of the JSON and SSE syntax the proxy's byte scanners look for. */
export const LF = 0x0a;
export const CR = 0x0d;
export const QUOTE = 0x22;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACKET = 0x5b;
export const BACKSLASH = 0x5c;
export const CLOSE_BRACKET = 0x5d;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;

/** JSON whitespace: space, tab, line feed, carriage return. */
export function isSpace(c: number): boolean {
  return c === 0x20 || c === LF || c === CR || c === 0x09;
}

/** Index of the first non-whitespace byte at or after `i` (`buf.length` when none). */
export function skipSpace(buf: Buffer, i: number): number {
  while (i < buf.length && isSpace(buf[i])) i++;
  return i;
}

/** Whether the quote at `q` is escaped (an odd run of backslashes before it). */
export function escaped(buf: Buffer, q: number): boolean {
  let n = 0;
  for (let b = q - 1; buf[b] === BACKSLASH; b--) n++;
  return n % 2 === 1;
}

/** Index just past the string whose opening quote is at `i` (`buf.length` when unterminated). */
export function stringEnd(buf: Buffer, i: number): number {
  let q = buf.indexOf(QUOTE, i + 1);
  while (q >= 0 && escaped(buf, q)) q = buf.indexOf(QUOTE, q + 1);
  return q < 0 ? buf.length : q + 1;
}
