/**
 * Prometheus text exposition written the way Python's `prometheus_client.generate_latest`
 * writes it, because vLLM and SGLang render `/metrics` with that library and routers (and our
 * golden files) compare bytes. prom-client cannot produce this
 * format: it prints `12` where Python prints `12.0`, and it has no `_created` families.
 */

import type { HistogramData } from "../engine/types.ts";

export type Labels = Record<string, string>;

/** Python's `repr(float)`: shortest round-trip digits, `12.0`, `1e-05`, `1.5e+16`. */
export function pythonFloatRepr(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (value === Number.POSITIVE_INFINITY) return "inf";
  if (value === Number.NEGATIVE_INFINITY) return "-inf";
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const sign = value < 0 ? "-" : "";
  // toExponential() without an argument gives the shortest digits that round-trip, like repr.
  const [mant, expText] = Math.abs(value).toExponential().split("e");
  const digits = mant.replace(".", "");
  const exp = Number(expText);
  // CPython's float_repr_style 'short' switches to exponent form outside 1e-4 <= |x| < 1e16.
  if (exp < -4 || exp >= 16) {
    const frac = digits.length > 1 ? `.${digits.slice(1)}` : "";
    const expSign = exp < 0 ? "-" : "+";
    return `${sign}${digits[0]}${frac}e${expSign}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  const fracPart = digits.slice(exp + 1) || "0";
  return `${sign}${intPart}.${fracPart}`;
}

/**
 * `prometheus_client.utils.floatToGoString`: Python repr, except that positive numbers with
 * more than six digits before the point switch to Go's exponent form (`1.843264e+06`). The
 * `e+0{dot-1}` template is copied as is, so 1e10 prints `1e+010` exactly like the library.
 */
export function floatToGoString(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  if (Number.isNaN(value)) return "NaN";
  const s = pythonFloatRepr(value);
  const dot = s.indexOf(".");
  if (value > 0 && dot > 6) {
    const mantissa = `${s[0]}.${s.slice(1, dot)}${s.slice(dot + 1)}`.replace(/[0.]+$/, "");
    return `${mantissa}e+0${dot - 1}`;
  }
  return s;
}

function escapeLabelValue(v: string): string {
  return v.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll('"', '\\"');
}

function escapeHelp(v: string): string {
  return v.replaceAll("\\", "\\\\").replaceAll("\n", "\\n");
}

/** One sample line; label pairs sorted by name as `sample_line` does. */
export function sampleLine(name: string, labels: Labels, value: number): string {
  const keys = Object.keys(labels).sort();
  const labelText =
    keys.length === 0
      ? ""
      : `{${keys.map((k) => `${k}="${escapeLabelValue(labels[k])}"`).join(",")}}`;
  return `${name}${labelText} ${floatToGoString(value)}\n`;
}

/**
 * Accumulates families in registration order. `created` is the Unix time (s) the server
 * started. `multiprocess` mimics prometheus_client's multi-process collector (SGLang always
 * runs it): no `_created` series and each histogram's `_sum` comes first.
 */
export interface ExpositionWriter {
  gauge(name: string, help: string, series: ReadonlyArray<[Labels, number]>): void;
  counter(name: string, help: string, series: ReadonlyArray<[Labels, number]>): void;
  histogram(name: string, help: string, labels: Labels, data: HistogramData): void;
  /** One histogram family with a series per label set. */
  histograms(name: string, help: string, series: ReadonlyArray<[Labels, HistogramData]>): void;
  text(): string;
}

export interface ExpositionWriterOptions {
  created: number;
  multiprocess?: boolean;
}

export function createExpositionWriter(options: ExpositionWriterOptions): ExpositionWriter {
  const { created, multiprocess = false } = options;
  const out: string[] = [];
  const header = (name: string, help: string, type: string) => {
    out.push(`# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n`);
  };
  const createdFamily = (base: string, help: string, labelSets: readonly Labels[]) => {
    if (multiprocess) return;
    header(`${base}_created`, help, "gauge");
    for (const labels of labelSets) out.push(sampleLine(`${base}_created`, labels, created));
  };
  const writer: ExpositionWriter = {
    gauge(name, help, series) {
      header(name, help, "gauge");
      for (const [labels, value] of series) out.push(sampleLine(name, labels, value));
    },
    counter(name, help, series) {
      // Registered without the suffix; exposed as `_total` plus a `_created` gauge family.
      header(`${name}_total`, help, "counter");
      for (const [labels, value] of series) out.push(sampleLine(`${name}_total`, labels, value));
      createdFamily(
        name,
        help,
        series.map(([labels]) => labels),
      );
    },
    histogram(name, help, labels, data) {
      writer.histograms(name, help, [[labels, data]]);
    },
    histograms(name, help, series) {
      header(name, help, "histogram");
      for (const [labels, data] of series) {
        if (multiprocess) out.push(sampleLine(`${name}_sum`, labels, data.sum));
        let acc = 0;
        for (let i = 0; i < data.buckets.length; i++) {
          acc += data.counts[i] ?? 0;
          const le = floatToGoString(data.buckets[i]);
          out.push(sampleLine(`${name}_bucket`, { ...labels, le }, acc));
        }
        acc += data.counts[data.buckets.length] ?? 0;
        out.push(sampleLine(`${name}_bucket`, { ...labels, le: "+Inf" }, acc));
        out.push(sampleLine(`${name}_count`, labels, data.count));
        if (!multiprocess) out.push(sampleLine(`${name}_sum`, labels, data.sum));
      }
      createdFamily(
        name,
        help,
        series.map(([labels]) => labels),
      );
    },
    text: () => out.join(""),
  };
  return writer;
}

/** prometheus_client's default content type. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
