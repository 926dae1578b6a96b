/**
 * A small HAProxy pass of bench:cells, built by hand, for the figures' and reports' tests. The
 * driver's clock starts at 0; stable from 1 s, cell-b killed at 3 s (HAProxy logs it DOWN at
 * 3.4 s), restarted at 5 s (ready at 5.5 s, UP at 6 s), the load ends at 7 s. The hash gives
 * p0 cell-a, p2 cell-c, and p1, p3, p4, p5 cell-b.
 */
import type { CpuSample } from "../../../src/bench/cells/cells-analysis.ts";
import type { CellsRun } from "../../../src/bench/cells/cells-run.ts";
import type { HapRequest } from "../../../src/bench/cells/haproxy-log.ts";
import type { LatencyResult } from "../../../src/bench/cells/latency.ts";
import type { CellsSettings } from "../../../src/bench/cells/spec.ts";
import type { StepRecord } from "../../../src/bench/records.ts";
import type { Attempt } from "../../../src/bench/trace-client.ts";

/** One request as both the driver and HAProxy saw it. */
interface Exchange {
  p: number;
  start: number;
  end: number;
  server: string;
  /** HAProxy's status and termination state; the driver's outcome and failure kind. */
  status?: number;
  term?: string;
  retries?: number;
  sent?: number;
  outcome?: Attempt["outcome"];
  kind?: string;
  stream?: boolean;
  paused?: number;
}

export const EXCHANGES: Exchange[] = [
  { p: 4, start: 500, end: 800, server: "cell-b" },
  { p: 0, start: 1100, end: 1200, server: "cell-a" },
  { p: 1, start: 1100, end: 1300, server: "cell-b" },
  { p: 2, start: 1200, end: 1300, server: "cell-c" },
  { p: 3, start: 1500, end: 1600, server: "cell-b" },
  { p: 0, start: 2000, end: 2100, server: "cell-a" },
  // In flight on cell-b at the kill: cut mid-stream after its first token.
  {
    p: 1,
    start: 2950,
    end: 3050,
    server: "cell-b",
    term: "SD--",
    outcome: "failed",
    kind: "transport_UND_ERR_SOCKET",
    stream: true,
  },
  // In flight on cell-b at the kill, retried by HAProxy on cell-c and answered there.
  { p: 5, start: 2980, end: 3600, server: "cell-c", retries: 1, sent: 3450 },
  // cell-b's p3 after the kill: answered on cell-c, held 50 ms there.
  { p: 3, start: 3100, end: 3700, server: "cell-c", sent: 3500, paused: 50 },
  { p: 0, start: 3600, end: 3700, server: "cell-a" },
  { p: 2, start: 4000, end: 4100, server: "cell-c" },
  { p: 3, start: 4500, end: 4600, server: "cell-c" },
  { p: 0, start: 6100, end: 6200, server: "cell-a" },
  { p: 3, start: 6200, end: 6300, server: "cell-b" },
];

const id = (p: number) => `cells-p${p}`;

function hapRequest(x: Exchange): HapRequest {
  return {
    startMs: x.start,
    sentMs: x.sent ?? x.start,
    endMs: x.end,
    server: x.server,
    program: id(x.p),
    status: x.status ?? 200,
    tR: 0,
    tw: 0,
    tc: 0,
    tr: x.end - x.start,
    ta: x.end - x.start,
    retries: x.retries ?? 0,
    term: x.term ?? "----",
    method: "POST",
    path: "/v1/chat/completions",
  };
}

function attempt(x: Exchange): Attempt {
  const outcome = x.outcome ?? "ok";
  return {
    programId: id(x.p),
    startMs: x.start,
    endMs: x.end,
    stream: x.stream ?? false,
    firstTokenMs: x.stream ? x.start + 10 : null,
    outcome,
    kind: x.kind ?? null,
    pausedMs: outcome === "ok" ? (x.paused ?? 0) : null,
    afterStop: false,
  };
}

function step(x: Exchange, i: number): StepRecord {
  return {
    programId: id(x.p),
    stepIndex: i,
    startMs: x.start,
    endMs: x.end,
    promptTokens: 100,
    cachedTokens: 0,
    completionTokens: 10,
    pausedMs: x.paused ?? 0,
  };
}

export const RING = new Map(
  [0, 1, 2, 3, 4, 5].map((p) => [id(p), ["cell-a", "cell-b", "cell-c", "cell-b"][Math.min(p, 3)]]),
);

export const SETTINGS: CellsSettings = {
  concurrency: 4,
  warmupMs: 1000,
  phaseMs: 2000,
  timeScale: 2.5,
  numGpuBlocks: 4000,
  profile: "llama-3.1-8b-h100",
  seed: 1,
  workload: "deepseek",
  streamShare: 0.5,
  latencyRequests: 3,
  largeRequests: 1,
  skipLone: false,
  haproxyLog: undefined,
  haproxyNoTrim: false,
  bodyBufferBytes: 1048576,
};

/** One CPU sample per phase edge: each part used 0.1 s more per sample, HAProxy 0.01 s. */
const SAMPLES: CpuSample[] = [0, 1, 2, 3, 4].map((k) => ({
  backends: k * 0.1,
  cells: k * 0.1,
  haproxy: k * 0.01,
  driver: k * 0.1,
  busy: k * 100,
  total: k * 200,
}));

export const latencyResult = (direct: number[], haproxy: number[]): LatencyResult => ({
  direct,
  haproxy,
  failed: 0,
  cpuMsPerRequest: 0.5,
});

export function fixtureRun(o: Partial<CellsRun> = {}): CellsRun {
  const answered = EXCHANGES.filter((x) => (x.outcome ?? "ok") === "ok");
  return {
    settings: SETTINGS,
    workloadName: "deepseek",
    cpuCount: 2,
    t0: 0,
    stableAt: 1000,
    killAt: 3000,
    restartAt: 5000,
    readyAt: 5500,
    endAt: 7000,
    drainMs: 150_000,
    records: {
      steps: answered.map(step),
      errors: [],
      programs: [0, 1, 2, 3, 4, 5].map((p) => ({
        programId: id(p),
        launchMs: 0,
        outcome: "unfinished" as const,
      })),
      endMs: 7000,
    },
    attempts: EXCHANGES.map(attempt),
    samples: SAMPLES,
    hapRequests: EXCHANGES.map(hapRequest),
    hapEvents: [
      { atMs: 3400, server: "cell-b", state: "DOWN" },
      { atMs: 6000, server: "cell-b", state: "UP" },
    ],
    skewBefore: 1,
    skewAfter: 0.5,
    latency: {
      id: "latency-3",
      smallBytes: 154,
      largeBytes: 204_950,
      small: latencyResult([1, 1, 1], [1.2, 1.2, 1.2]),
      large: latencyResult([2], [3]),
      smallWindow: { from: 7500, to: 7600 },
      largeWindow: { from: 7600, to: 7700 },
    },
    ids: [0, 1, 2, 3, 4, 5].map(id),
    ring: RING,
    ...o,
  };
}
