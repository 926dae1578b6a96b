/** Cells and layout shared by the bench and simulate tables. */

/**
 * A figure with `digits` decimals, or `missing` where there is none: not measured (null,
 * undefined, NaN from an empty list), or a ratio over nothing. Each report keeps its own mark.
 */
export function figure(v: number | null | undefined, digits: number, missing: string): string {
  return v === null || v === undefined || !Number.isFinite(v) ? missing : v.toFixed(digits);
}

export function cell(v: number | null, digits: number): string {
  return v === null ? "-" : v.toFixed(digits);
}

export function ratioText(v: number | null, base: number | null): string {
  if (v === null || base === null || base === 0) return "";
  return ` (${(v / base).toFixed(2)}x)`;
}

export function renderTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [line(header), rule, ...rows.map(line)].join("\n");
}
