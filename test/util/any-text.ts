import fc from "fast-check";

/**
 * Any code point, lone surrogates included, from ASCII's control characters to the astral
 * planes. Built from integers: fast-check's own `unit: "binary"` maps every code point before
 * its first draw, a second of the test process's time.
 */
const anyCodePoint = fc
  .oneof(
    fc.integer({ min: 0, max: 0x7f }),
    fc.integer({ min: 0x80, max: 0xffff }),
    fc.integer({ min: 0x10000, max: 0x10ffff }),
  )
  .map((c) => String.fromCodePoint(c));

/** Strings of up to `maxLength` such code points. */
export const anyText = (maxLength: number) =>
  fc.array(anyCodePoint, { maxLength }).map((chars) => chars.join(""));
