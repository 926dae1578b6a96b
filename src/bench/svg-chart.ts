import type { RunReport } from "./report.ts";

/**
 * The one SVG writer of the reports and the scripts' charts: hand-written SVG, no dependency,
 * a plain string any browser renders. Two shapes: bars of bench runs (`maitred bench --svg`,
 * `maitred simulate --svg`) and lines over an evenly spaced x axis (the host-tier scorecards,
 * the soak), both on the same document frame, and charts stacked into one file.
 */

const PANEL_W = 320;
const PANEL_H = 240;
const MARGIN = { top: 40, bottom: 48, side: 20 };
const PALETTE = ["#64748b", "#2563eb", "#16a34a", "#d97706", "#9333ea", "#dc2626"];

export function escapeXml(s: string): string {
  return s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

/** The document around a chart's elements: its size, font and white background. */
function svgDocument(
  size: { width: number; height: number; fontFamily: string },
  body: readonly string[],
  title?: string,
): string {
  const { width, height, fontFamily } = size;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${fontFamily}" font-size="12">`,
    ...(title === undefined ? [] : [`<title>${escapeXml(title)}</title>`]),
    `<rect width="${width}" height="${height}" fill="white"/>`,
    ...body,
    "</svg>",
    "",
  ].join("\n");
}

interface Panel {
  title: string;
  values: (number | null)[];
  digits: number;
}

function panel(p: Panel, labels: string[], x0: number): string {
  const plotH = PANEL_H - MARGIN.top - MARGIN.bottom;
  const plotW = PANEL_W - 2 * MARGIN.side;
  const max = Math.max(0, ...p.values.map((v) => v ?? 0));
  const slot = plotW / Math.max(1, p.values.length);
  const barW = slot * 0.6;
  const baseY = MARGIN.top + plotH;
  const parts = [
    `<text x="${x0 + PANEL_W / 2}" y="22" text-anchor="middle" font-weight="bold">${escapeXml(p.title)}</text>`,
    `<line x1="${x0 + MARGIN.side}" y1="${baseY}" x2="${x0 + PANEL_W - MARGIN.side}" y2="${baseY}" stroke="#333"/>`,
  ];
  p.values.forEach((v, i) => {
    const h = v === null || max === 0 ? 0 : (v / max) * plotH;
    const x = x0 + MARGIN.side + i * slot + (slot - barW) / 2;
    const cx = (x + barW / 2).toFixed(1);
    const text = v === null ? "n/a" : v.toFixed(p.digits);
    parts.push(
      `<rect x="${x.toFixed(1)}" y="${(baseY - h).toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" fill="${PALETTE[i % PALETTE.length]}"/>`,
      `<text x="${cx}" y="${(baseY - h - 4).toFixed(1)}" text-anchor="middle">${text}</text>`,
      `<text x="${cx}" y="${baseY + 16}" text-anchor="middle">${escapeXml(labels[i])}</text>`,
    );
  });
  return parts.join("\n");
}

/** Bench runs as bars: steps/min (higher is better) beside p95 step latency (lower is better). */
export function renderSvgChart(runs: readonly RunReport[]): string {
  const labels = runs.map((r) => `${r.router} C=${r.concurrency}`);
  const width = PANEL_W * 2;
  const title = runs.length > 0 ? `${runs[0].workload}, seed ${runs[0].seed}` : "";
  return svgDocument({ width, height: PANEL_H, fontFamily: "sans-serif" }, [
    panel({ title: "steps/min", values: runs.map((r) => r.steps_per_min), digits: 1 }, labels, 0),
    panel(
      { title: "p95 step latency (ms)", values: runs.map((r) => r.step_latency_ms.p95), digits: 0 },
      labels,
      PANEL_W,
    ),
    `<text x="${width / 2}" y="${PANEL_H - 8}" text-anchor="middle" fill="#555">${escapeXml(title)}</text>`,
  ]);
}

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

/** A line chart's size: what `stackCharts` lays them out by. */
const LINE_W = 640;
const LINE_H = 340;

/**
 * Evenly spaced x values, one line per series labelled at its right end, y from 0 with a grid
 * line every `yStep`.
 */
export function lineChart(c: LineChart): string {
  const [w, h, left, right, top, bottom] = [LINE_W, LINE_H, 56, 110, 34, 44];
  const ticks = Math.ceil(Math.max(...c.series.flatMap((l) => l.ys)) / c.yStep);
  const yMax = ticks * c.yStep;
  const x = (i: number) => left + ((w - left - right) * i) / Math.max(1, c.xs.length - 1);
  const y = (v: number) => top + (h - top - bottom) * (1 - v / yMax);
  const out: string[] = [`<text x="${left}" y="18" font-size="13">${escapeXml(c.title)}</text>`];
  for (let k = 0; k <= ticks; k++) {
    // Named from k, not summed, so a fractional step prints as written (0.3, not 0.30000000000000004).
    const v = Number((k * c.yStep).toFixed(6));
    out.push(
      `<line x1="${left}" x2="${w - right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text>`,
    );
  }
  c.xs.forEach((label, i) => {
    out.push(
      `<text x="${x(i)}" y="${h - bottom + 16}" text-anchor="middle">${escapeXml(String(label))}</text>`,
    );
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
      `<text x="${w - right + 8}" y="${y(ys[ys.length - 1]) + 4}" fill="${colour}">${escapeXml(label)}</text>`,
    );
  }
  out.push(
    `<text x="${(left + w - right) / 2}" y="${h - 8}" text-anchor="middle">${escapeXml(c.xLabel)}</text>`,
  );
  return svgDocument({ width: w, height: h, fontFamily: "system-ui, sans-serif" }, out, c.title);
}

export interface XyPoint {
  x: number;
  y: number;
  label: string;
}

export interface XySeries {
  label: string;
  colour: string;
  /** Joined in the order given, each marked and labelled. */
  points: readonly XyPoint[];
}

/** The colours of a chart's lines, one per series in turn. */
export const SERIES_COLOURS = ["#2f5fb3", "#1a7f37", "#b35900", "#7f3fbf", "#7f8c8d", "#c0392b"];

export interface XyChart {
  title: string;
  xLabel: string;
  series: readonly XySeries[];
}

/** A round step giving about five grid lines up to `max`. */
function niceStep(max: number): number {
  const raw = Math.max(max, 1e-9) / 5;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? raw;
}

/**
 * Points on two numeric axes from 0 (a frontier: steps/min against step p99), a line per series
 * through its points, each labelled; the size of a line chart, so `stackCharts` takes it.
 */
export function xyChart(c: XyChart): string {
  const [w, h, left, right, top, bottom] = [LINE_W, LINE_H, 56, 110, 34, 44];
  const all = c.series.flatMap((s) => s.points);
  const xStep = niceStep(Math.max(0, ...all.map((p) => p.x)));
  const yStep = niceStep(Math.max(0, ...all.map((p) => p.y)));
  const xMax = Math.max(1, Math.ceil(Math.max(0, ...all.map((p) => p.x)) / xStep)) * xStep;
  const yMax = Math.max(1, Math.ceil(Math.max(0, ...all.map((p) => p.y)) / yStep)) * yStep;
  const x = (v: number) => left + ((w - left - right) * v) / xMax;
  const y = (v: number) => top + (h - top - bottom) * (1 - v / yMax);
  const round = (v: number) => Number(v.toFixed(6));
  const out: string[] = [`<text x="${left}" y="18" font-size="13">${escapeXml(c.title)}</text>`];
  for (let v = 0; v <= yMax + 1e-9; v += yStep) {
    out.push(
      `<line x1="${left}" x2="${w - right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${round(v)}</text>`,
    );
  }
  for (let v = 0; v <= xMax + 1e-9; v += xStep) {
    out.push(`<text x="${x(v)}" y="${h - bottom + 16}" text-anchor="middle">${round(v)}</text>`);
  }
  for (const { label, colour, points } of c.series) {
    const line = points.map((p) => `${x(p.x).toFixed(1)},${y(p.y).toFixed(1)}`).join(" ");
    out.push(`<polyline points="${line}" fill="none" stroke="${colour}" stroke-width="2"/>`);
    for (const p of points) {
      out.push(
        `<circle cx="${x(p.x).toFixed(1)}" cy="${y(p.y).toFixed(1)}" r="3" fill="${colour}"/>`,
        `<text x="${(x(p.x) + 5).toFixed(1)}" y="${(y(p.y) - 5).toFixed(1)}" fill="${colour}" font-size="10">${escapeXml(p.label)}</text>`,
      );
    }
    const last = points[points.length - 1];
    if (last !== undefined) {
      out.push(
        `<text x="${w - right + 8}" y="${(y(last.y) + 4).toFixed(1)}" fill="${colour}">${escapeXml(label)}</text>`,
      );
    }
  }
  out.push(
    `<text x="${(left + w - right) / 2}" y="${h - 8}" text-anchor="middle">${escapeXml(c.xLabel)}</text>`,
  );
  return svgDocument({ width: w, height: h, fontFamily: "system-ui, sans-serif" }, out, c.title);
}

/** Line charts one under the other in one document (the soak's memory above its CPU). */
export function stackCharts(title: string, charts: readonly string[]): string {
  const inner = (svg: string, k: number) => svg.replace("<svg ", `<svg y="${k * LINE_H}" `);
  return svgDocument(
    { width: LINE_W, height: LINE_H * charts.length, fontFamily: "system-ui, sans-serif" },
    charts.map(inner),
    title,
  );
}
