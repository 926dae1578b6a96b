/**
 * What `npm run bench:backend-kill` makes of its run: the steps either side of the kill, the
 * failures split into those the router could have served elsewhere and those it could not, and
 * the table it prints. Pure: the run itself is backend-kill.ts.
 */
import { markdownTable } from "../markdown-table.ts";
import type { RunRecords } from "../records.ts";

/** The closed loop's kind for a stream that broke after its first bytes reached the client. */
const CUT_KIND = "stream_error";

export interface KillOutcome {
  /** Steps answered before the kill (or, in a control run, the split). */
  before: number;
  after: number;
  /** Failed before any byte reached the client: the router could have served them elsewhere. */
  lost: number;
  /** Cut mid-stream: their bytes were out, so no router could send them elsewhere. */
  cut: number;
  /** Every failure by its kind, in the order first seen. */
  kinds: [string, number][];
}

/** The run's records either side of `killedAtMs` (ms since the run started). */
export function killOutcome(
  records: Pick<RunRecords, "steps" | "errors">,
  killedAtMs: number,
): KillOutcome {
  const before = records.steps.filter((s) => s.endMs < killedAtMs).length;
  const cut = records.errors.filter((e) => e.kind === CUT_KIND).length;
  const kinds = new Map<string, number>();
  for (const e of records.errors) kinds.set(e.kind, (kinds.get(e.kind) ?? 0) + 1);
  return {
    before,
    after: records.steps.length - before,
    lost: records.errors.length - cut,
    cut,
    kinds: [...kinds],
  };
}

/** The sum of every series of the counter `name` in a Prometheus text exposition. */
export function metricSum(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split("\n"))
    if (line.startsWith(name)) sum += Number(line.split(" ").at(-1));
  return sum;
}

export interface BackendKillResult extends KillOutcome {
  numBackends: number;
  timeScale: number;
  numGpuBlocks: number;
  concurrency: number;
  workload: string;
  streamShare: number;
  /** Nothing killed: the same two windows on a full fleet. */
  control: boolean;
  killedAtMs: number;
  durationMs: number;
  /** The router's `maitred_upstream_retries_total`. */
  retries: number;
  /** From the kill until `/backends` showed the backend unhealthy; null if not within 30 s. */
  unhealthyAfterMs: number | null;
}

/** What the script prints: the run in a line, then the measures in a table, then the kinds. */
export function backendKillLines(r: BackendKillResult): string[] {
  const lines = [
    `${r.numBackends} backends (sim, time scale ${r.timeScale}, ${r.numGpuBlocks} blocks), ${r.concurrency} programs of ${r.workload}, ` +
      `${Math.round(r.streamShare * 100)} % streamed; ${r.control ? "control run, nothing killed; split" : "backend 2 killed (SIGKILL)"} at ${(r.killedAtMs / 1000).toFixed(1)} s of ${(r.durationMs / 1000).toFixed(0)} s; no client retries`,
    "",
    markdownTable(
      ["measure", "value"],
      [
        ["steps answered before the kill", String(r.before)],
        ["steps answered after the kill", String(r.after)],
        ["requests lost (failed before any byte reached the client)", String(r.lost)],
        ["streams cut mid-answer (bytes already out)", String(r.cut)],
        ["router retries on another backend", String(r.retries)],
        [
          "killed backend unhealthy after",
          r.unhealthyAfterMs === null ? "not within 30 s" : `${r.unhealthyAfterMs.toFixed(0)} ms`,
        ],
      ],
    ),
  ];
  if (r.kinds.length > 0)
    lines.push(`\nfailures by kind: ${r.kinds.map(([k, n]) => `${k} ${n}`).join(", ")}`);
  return lines;
}
