/**
 * The shape of `npm run bench:cells`'s stack, the same in every run: three cells of two
 * simulated backends each, the one killed and restarted, and the program ids its driver sends.
 */

export const CELLS = ["cell-a", "cell-b", "cell-c"];
/** cell-b: the cell killed and restarted. */
export const VICTIM = 1;
export const VICTIM_NAME = CELLS[VICTIM];
export const BACKENDS_PER_CELL = 2;
/** Program ids of the closed loop: `cells-p<index>`, the same in both passes. */
export const PROGRAM_PREFIX = "cells-";
