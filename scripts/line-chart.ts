/**
 * A small self-contained SVG line chart for the scorecards (bench-host-tier, bench-tier-grid):
 * evenly spaced x values, one line per series labelled at its right end, y from 0 with a grid
 * line every `yStep`. No dependency: any browser renders the string.
 */

export interface LineSeries {
  label: string;
  colour: string;
  ys: number[];
  dashed?: boolean;
}

export interface LineChart {
  title: string;
  xLabel: string;
  xs: readonly (string | number)[];
  series: readonly LineSeries[];
  yStep: number;
}

export function lineChart(c: LineChart): string {
  const [w, h, left, right, top, bottom] = [640, 340, 56, 110, 34, 44];
  const ticks = Math.ceil(Math.max(...c.series.flatMap((l) => l.ys)) / c.yStep);
  const yMax = ticks * c.yStep;
  const x = (i: number) => left + ((w - left - right) * i) / Math.max(1, c.xs.length - 1);
  const y = (v: number) => top + (h - top - bottom) * (1 - v / yMax);
  const out: string[] = [];
  for (let k = 0; k <= ticks; k++) {
    // Named from k, not summed, so a fractional step prints as written (0.3, not 0.30000000000000004).
    const v = Number((k * c.yStep).toFixed(6));
    out.push(
      `<line x1="${left}" x2="${w - right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text>`,
    );
  }
  c.xs.forEach((label, i) => {
    out.push(`<text x="${x(i)}" y="${h - bottom + 16}" text-anchor="middle">${label}</text>`);
  });
  for (const { label, colour, ys, dashed } of c.series) {
    const points = ys.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    const dash = dashed === true ? ' stroke-dasharray="6 4"' : "";
    out.push(
      `<polyline points="${points}" fill="none" stroke="${colour}" stroke-width="2"${dash}/>`,
      ...ys.map(
        (v, i) =>
          `<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3" fill="${colour}"/>`,
      ),
      `<text x="${w - right + 8}" y="${y(ys[ys.length - 1]) + 4}" fill="${colour}">${label}</text>`,
    );
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${w} ${h}" width="${w}" height="${h}" font-family="system-ui, sans-serif" font-size="12">
<title>${c.title}</title>
<rect width="${w}" height="${h}" fill="#fff"/>
<text x="${left}" y="18" font-size="13">${c.title}</text>
${out.join("\n")}
<text x="${(left + w - right) / 2}" y="${h - 8}" text-anchor="middle">${c.xLabel}</text>
</svg>
`;
}
