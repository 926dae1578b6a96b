import type { Placement } from "./api.ts";
import type { PlacementFn } from "./records.ts";

/**
 * True best fit: the backend with the least remaining room that still fits, which keeps big
 * gaps free for big programs (ThunderAgent's "BFD" is really worst fit).
 */
export const bestFit: PlacementFn = (rooms, need) => {
  let best = -1;
  let bestRoom = Number.POSITIVE_INFINITY;
  for (let i = 0; i < rooms.length; i++) {
    const room = rooms[i];
    if (room === null || room < need) continue;
    if (room < bestRoom) {
      best = i;
      bestRoom = room;
    }
  }
  return best;
};

/** The original's rule: the backend with the most remaining room (spreads load). */
export const worstFit: PlacementFn = (rooms, need) => {
  let best = -1;
  let bestRoom = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < rooms.length; i++) {
    const room = rooms[i];
    if (room === null || room < need) continue;
    if (room > bestRoom) {
      best = i;
      bestRoom = room;
    }
  }
  return best;
};

export function placementFn(placement: Placement): PlacementFn {
  return placement === "worst-fit" ? worstFit : bestFit;
}

/** Index of the smallest `load(i)` among candidates (`ok(i)`), lowest index on ties; or -1. */
export function argMin(count: number, ok: (i: number) => boolean, load: (i: number) => number) {
  let best = -1;
  let bestLoad = Number.POSITIVE_INFINITY;
  for (let i = 0; i < count; i++) {
    if (!ok(i)) continue;
    const l = load(i);
    if (l < bestLoad) {
      best = i;
      bestLoad = l;
    }
  }
  return best;
}
