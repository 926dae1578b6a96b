import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { createMedianWindow, observeMedian } from "../../src/core/median-window.ts";

const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);

function naiveMedian(values: number[]): number {
  const s = values.slice().sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

test("the window's median is the median of its last `size` finite observations", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 9 }),
      fc.array(fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double()), { maxLength: 60 }),
      (size, observations) => {
        const w = createMedianWindow(size);
        const finite: number[] = [];
        for (const v of observations) {
          const got = observeMedian(w, v);
          if (Number.isFinite(v)) finite.push(v);
          const expected = finite.length === 0 ? Number.NaN : naiveMedian(finite.slice(-size));
          assert.ok(Object.is(got, expected) || got === expected, `${got} vs ${expected}`);
        }
      },
    ),
    { seed: SEED },
  );
});
