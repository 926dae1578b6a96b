/**
 * What the engines actually went through while a shadow watched: the KV overflow its decisions
 * might have spared them, read from the same tick samples the router's core gets. An engine
 * that reports waiting requests has run out of KV (or batch slots) and queues work; one whose
 * preemption counter rises is evicting running requests to recompute them later. Both are what
 * tr's pauses exist to prevent.
 */
import type { BackendMetricsSample, SchedulerEvent } from "../core/events.ts";

export interface EngineEvidence {
  /** Tick events that carried at least one engine sample. */
  ticks: number;
  /** Of those, the ticks on which some engine reported waiting requests or new preemptions. */
  overflowTicks: number;
  /** Engine samples with waiting > 0. */
  waitingSamples: number;
  /** Most requests one engine reported waiting at once; null before any engine said. */
  peakWaiting: number | null;
  /** Highest KV usage (0..1) one engine reported; null before any engine said. */
  peakKvUsage: number | null;
  /** Engine preemptions counted while the shadow ran (the rise of every engine's counter). */
  preemptions: number;
}

export interface EvidenceRecorder {
  observe(event: SchedulerEvent): void;
  view(): EngineEvidence;
}

export function createEvidenceRecorder(): EvidenceRecorder {
  const ev: EngineEvidence = {
    ticks: 0,
    overflowTicks: 0,
    waitingSamples: 0,
    peakWaiting: null,
    peakKvUsage: null,
    preemptions: 0,
  };
  /** Each backend's last preemption counter: the first sample is the baseline, not a rise. */
  const lastPreemptions = new Map<string, number>();

  /** Whether this sample shows the engine overflowing (waiting, or preemptions rising). */
  function sample(id: string, s: BackendMetricsSample): boolean {
    let overflow = false;
    if (s.waiting !== null) {
      ev.peakWaiting = Math.max(ev.peakWaiting ?? 0, s.waiting);
      if (s.waiting > 0) {
        ev.waitingSamples++;
        overflow = true;
      }
    }
    if (s.kvUsage !== null) ev.peakKvUsage = Math.max(ev.peakKvUsage ?? 0, s.kvUsage);
    if (s.preemptionsTotal !== null) {
      const before = lastPreemptions.get(id);
      // A counter that fell is an engine that restarted: its new count is the new baseline.
      if (before !== undefined && s.preemptionsTotal > before) {
        ev.preemptions += s.preemptionsTotal - before;
        overflow = true;
      }
      lastPreemptions.set(id, s.preemptionsTotal);
    }
    return overflow;
  }

  return {
    observe(event) {
      if (event.kind !== "tick") return;
      let samples = 0;
      let overflow = false;
      for (const id in event.metrics) {
        const s = event.metrics[id];
        if (s === null || typeof s !== "object") continue;
        samples++;
        if (sample(id, s)) overflow = true;
      }
      if (samples === 0) return;
      ev.ticks++;
      if (overflow) ev.overflowTicks++;
    },
    view: () => ({ ...ev }),
  };
}
