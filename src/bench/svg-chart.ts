import type { RunReport } from "./report.ts";

/**
 * A small hand-written SVG bar chart of bench runs: one panel for steps/min (higher is
 * better) and one for p95 step latency (lower is better), one bar per run, value on top.
 * No dependency: the output is a plain string that any browser renders.
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

export function renderSvgChart(runs: readonly RunReport[]): string {
  const labels = runs.map((r) => `${r.router} C=${r.concurrency}`);
  const width = PANEL_W * 2;
  const title = runs.length > 0 ? `${runs[0].workload}, seed ${runs[0].seed}` : "";
  const body = [
    panel({ title: "steps/min", values: runs.map((r) => r.steps_per_min), digits: 1 }, labels, 0),
    panel(
      { title: "p95 step latency (ms)", values: runs.map((r) => r.step_latency_ms.p95), digits: 0 },
      labels,
      PANEL_W,
    ),
    `<text x="${width / 2}" y="${PANEL_H - 8}" text-anchor="middle" fill="#555">${escapeXml(title)}</text>`,
  ];
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${PANEL_H}" viewBox="0 0 ${width} ${PANEL_H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${PANEL_H}" fill="white"/>`,
    ...body,
    "</svg>",
    "",
  ].join("\n");
}
