/**
 * The one Markdown table writer of the scripts' reports. Text columns align left and figures
 * right, so a table pasted into a README reads as the scripts/README.md tables do. `left` names
 * the left-aligned columns: the first `left` columns when a number, else those whose heading
 * it lists (the figures then keep their place whatever the order of the text columns).
 */
export function markdownTable(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  left: number | readonly string[] = 1,
): string {
  const isLeft = (h: string, i: number) => (typeof left === "number" ? i < left : left.includes(h));
  const align = head.map((h, i) => (isLeft(h, i) ? "---" : "---:"));
  return [head, align, ...rows].map((r) => `| ${r.join(" | ")} |`).join("\n");
}

/** 12,345: figures grouped by thousands, as the READMEs print them. */
export const grouped = (x: number, digits = 0): string =>
  x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
