/**
 * A Prometheus counter that follows monotonic counts kept elsewhere (the scheduler core's, the
 * shadow's), caught up at each scrape: one series per label set, each created at the first
 * scrape (zeros included, so a rate over it starts at once), then raised by what its count grew
 * since. A count that goes down (it never should) is not followed below what was exported.
 */
import { Counter, type Registry } from "prom-client";

export type CountSeries = Array<[Record<string, string>, number]>;

export function syncedCounter(o: {
  registers: Registry[];
  name: string;
  help: string;
  labelNames?: string[];
  /** The counts now, by label set; undefined when there is nothing to read this scrape. */
  values(): CountSeries | undefined;
}): void {
  const last = new Map<string, number>();
  new Counter({
    name: o.name,
    help: o.help,
    labelNames: o.labelNames ?? [],
    registers: o.registers,
    collect() {
      const values = o.values();
      if (values === undefined) return;
      for (const [labels, value] of values) {
        const key = JSON.stringify(labels);
        const before = last.get(key);
        if (before === undefined) this.inc(labels, Math.max(0, value));
        else if (value > before) this.inc(labels, value - before);
        last.set(key, Math.max(before ?? 0, value));
      }
    },
  });
}

/** One count, no labels. */
export const single = (value: number): CountSeries => [[{}, value]];

/** One series per value of `label`, counts read by key. */
export function byLabel<K extends string>(
  label: string,
  keys: readonly K[],
  counts: Record<K, number>,
): CountSeries {
  return keys.map((k) => [{ [label]: k }, counts[k]]);
}
