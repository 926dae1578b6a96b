/**
 * What `check:ui` (ui-check.ts) reads off the live page and how it judges it: kept apart from
 * the browser so the judgement is tried without one.
 */

/** What the page showed when it was checked. */
export interface PageCounts {
  backends: number;
  programs: number;
  charts: number;
  decisions: number;
  status: string | null;
}

/** What is wrong with the page: two backend rows, some program rows, two charts, status live. */
export function pageProblems(c: PageCounts): string[] {
  const problems: string[] = [];
  if (c.backends !== 2) problems.push(`${c.backends} backend rows, want 2`);
  if (c.programs === 0) problems.push("no program rows");
  if (c.charts !== 2) problems.push(`${c.charts} charts drawn, want 2`);
  if (c.status !== "live") problems.push(`status "${c.status}", want "live"`);
  return problems;
}

/** The report's line of counts; `errors` are the console's and the page's errors. */
export const countsLine = (c: PageCounts, errors: number) =>
  `backend rows ${c.backends}, program rows ${c.programs}, charts ${c.charts}, decisions listed ${c.decisions}, status "${c.status}", console errors ${errors}`;
