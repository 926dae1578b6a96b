/**
 * A small reader for the Prometheus text exposition format, enough for engine `/metrics`
 *: `name{label="v",...} value [timestamp]` lines, comments
 * skipped, label values unescaped. Family and sample order are not relied on.
 */

export interface PromSample {
  labels: Record<string, string>;
  value: number;
}

export type PromFamilies = Map<string, PromSample[]>;

function parseValue(s: string): number {
  if (s === "+Inf") return Number.POSITIVE_INFINITY;
  if (s === "-Inf") return Number.NEGATIVE_INFINITY;
  return Number(s); // handles NaN, exponent form (1.843264e+06) and Go-style "12.0"
}

function parseLabels(text: string, start: number, labels: Record<string, string>): number {
  // Returns the index just past the closing brace.
  let i = start;
  while (i < text.length) {
    while (text[i] === " " || text[i] === ",") i++;
    if (text[i] === "}") return i + 1;
    const eq = text.indexOf("=", i);
    if (eq < 0) return -1;
    const name = text.slice(i, eq).trim();
    i = eq + 1;
    if (text[i] !== '"') return -1;
    i++;
    let value = "";
    while (i < text.length && text[i] !== '"') {
      if (text[i] === "\\" && i + 1 < text.length) {
        const c = text[i + 1];
        value += c === "n" ? "\n" : c;
        i += 2;
      } else value += text[i++];
    }
    if (i >= text.length) return -1;
    labels[name] = value;
    i++; // closing quote
  }
  return -1;
}

/** Parse exposition text; malformed lines are skipped rather than failing the whole poll. */
export function parsePrometheusText(
  text: string,
  wanted?: (name: string) => boolean,
): PromFamilies {
  const out: PromFamilies = new Map();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line[0] === "#") continue;
    const brace = line.indexOf("{");
    const space = line.indexOf(" ");
    if (space < 0) continue;
    const nameEnd = brace >= 0 && brace < space ? brace : space;
    const name = line.slice(0, nameEnd);
    if (wanted && !wanted(name)) continue;
    const labels: Record<string, string> = {};
    let rest = nameEnd;
    if (nameEnd === brace) {
      rest = parseLabels(line, brace + 1, labels);
      if (rest < 0) continue;
    }
    const fields = line.slice(rest).trim().split(/\s+/);
    const value = parseValue(fields[0] ?? "");
    if (Number.isNaN(value) && fields[0] !== "NaN") continue;
    let list = out.get(name);
    if (!list) {
      list = [];
      out.set(name, list);
    }
    list.push({ labels, value });
  }
  return out;
}

/** Sum of a family over all label sets (e.g. over vLLM's `engine` label); null when absent. */
export function sumOf(families: PromFamilies, name: string): number | null {
  const list = families.get(name);
  if (!list || list.length === 0) return null;
  let total = 0;
  for (const s of list) total += s.value;
  return total;
}

/** Sum of a family over the label sets where `label` is `value`; null when none has it. */
export function sumWhere(
  families: PromFamilies,
  name: string,
  label: string,
  value: string,
): number | null {
  let total: number | null = null;
  for (const s of families.get(name) ?? [])
    if (s.labels[label] === value) total = (total ?? 0) + s.value;
  return total;
}

/** Mean of a family over its label sets (ratios such as KV usage); null when absent. */
export function meanOf(families: PromFamilies, name: string): number | null {
  const list = families.get(name);
  if (!list || list.length === 0) return null;
  return (sumOf(families, name) as number) / list.length;
}
