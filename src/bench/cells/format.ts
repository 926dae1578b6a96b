/**
 * The numbers of `npm run bench:cells`'s report: a figure that could not be measured (NaN, an
 * empty list's percentile) prints as `-`.
 */
import { figure } from "../table-cells.ts";

const fixed = (digits: number) => (v: number) => figure(v, digits, "-");

export const f0 = fixed(0);
export const f1 = fixed(1);
export const f2 = fixed(2);
export const f3 = fixed(3);
/** A length of time in seconds, from ms. */
export const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
/** The largest value; NaN for none (Math.max gives -Infinity, which would print as a number). */
export const maxOf = (xs: readonly number[]) => (xs.length === 0 ? Number.NaN : Math.max(...xs));
