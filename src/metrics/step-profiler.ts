/**
 * `--profile`: per-step timing per program, served at `/profiles` and appended to
 * `step_profiles.csv` (ThunderAgent's profiling output, plus the `prompt_tokens`,
 * `completion_tokens` and `cached_tokens` columns of newer ThunderAgent). Unlike the original,
 * rows go through an async append stream (never blocking the event loop) and memory holds
 * running sums, not every step.
 */
import { createWriteStream, mkdirSync, statSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import type { RequestOutcome, Usage } from "../core/events.ts";
import type { Logger } from "../util/logger.ts";

export interface StepTiming {
  programId: string;
  /** Clock ms. */
  arrivedAt: number;
  dispatchedAt: number | null;
  firstTokenAt: number | null;
  lastTokenAt: number | null;
  endedAt: number;
  pausedMs: number;
  streamed: boolean;
  usage: Usage | null;
  outcome: RequestOutcome;
}

export interface ProgramProfile {
  step_count: number;
  avg_prefill_s: number;
  avg_decode_s: number;
  avg_pause_s: number;
  avg_tool_call_s: number;
  avg_kv_hit_rate: number;
  avg_ttft_s: number;
  total_pause_s: number;
  total_tool_call_s: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
}

export interface StepProfiler {
  record(step: StepTiming): void;
  profiles(): Record<string, ProgramProfile>;
  profile(programId: string): ProgramProfile | undefined;
  readonly csvPath: string;
  close(): Promise<void>;
}

interface Sums {
  steps: number;
  prefill: number;
  decode: number;
  pause: number;
  tool: number;
  hitRate: number;
  ttft: number;
  prompt: number;
  completion: number;
  cached: number;
  lastEndedAt: number | null;
}

export const CSV_COLUMNS = [
  "program_id",
  "step_id",
  "prefill_s",
  "decode_s",
  "pause_s",
  "tool_call_s",
  "kv_hit_rate",
  "completed_at",
  "prompt_tokens",
  "completion_tokens",
  "cached_tokens",
  "ttft_s",
  "outcome",
] as const;

/** Programs whose sums are kept; the least recently finished are dropped beyond this. */
const MAX_PROFILED_PROGRAMS = 100_000;

function csvField(v: string | number): string {
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

const secs = (ms: number) => Math.max(0, ms) / 1000;
const round = (x: number) => Math.round(x * 1e6) / 1e6;

export function createStepProfiler(options: { dir: string; logger: Logger }): StepProfiler {
  mkdirSync(options.dir, { recursive: true });
  const csvPath = join(options.dir, "step_profiles.csv");
  let fresh = true;
  try {
    fresh = statSync(csvPath).size === 0;
  } catch {
    fresh = true;
  }
  const out: WriteStream = createWriteStream(csvPath, { flags: "a" });
  out.on("error", (err) =>
    options.logger.error("profile CSV write failed", { path: csvPath, err }),
  );
  if (fresh) out.write(`${CSV_COLUMNS.join(",")}\n`);
  const programs = new Map<string, Sums>();

  const summary = (s: Sums): ProgramProfile => {
    const n = Math.max(1, s.steps);
    return {
      step_count: s.steps,
      avg_prefill_s: round(s.prefill / n),
      avg_decode_s: round(s.decode / n),
      avg_pause_s: round(s.pause / n),
      avg_tool_call_s: round(s.tool / n),
      avg_kv_hit_rate: round(s.hitRate / n),
      avg_ttft_s: round(s.ttft / n),
      total_pause_s: round(s.pause),
      total_tool_call_s: round(s.tool),
      prompt_tokens: s.prompt,
      completion_tokens: s.completion,
      cached_tokens: s.cached,
    };
  };

  return {
    csvPath,
    record(step) {
      let s = programs.get(step.programId);
      if (s) programs.delete(step.programId); // re-insert: Map order = recency
      s ??= {
        steps: 0,
        prefill: 0,
        decode: 0,
        pause: 0,
        tool: 0,
        hitRate: 0,
        ttft: 0,
        prompt: 0,
        completion: 0,
        cached: 0,
        lastEndedAt: null,
      };
      programs.set(step.programId, s);
      if (programs.size > MAX_PROFILED_PROGRAMS)
        programs.delete(programs.keys().next().value as string);

      const start = step.dispatchedAt ?? step.endedAt;
      // Prefill = dispatch → first event, decode = first → last event (streams only).
      // A non-streamed response has no first token; its whole service time counts as decode.
      const prefill = step.firstTokenAt !== null ? secs(step.firstTokenAt - start) : 0;
      const decode =
        step.firstTokenAt !== null
          ? secs((step.lastTokenAt ?? step.firstTokenAt) - step.firstTokenAt)
          : step.streamed
            ? 0
            : secs(step.endedAt - start);
      const pause = secs(step.pausedMs);
      // Tool time = previous step's end → this arrival; 0 on the first step.
      const tool = s.lastEndedAt === null ? 0 : secs(step.arrivedAt - s.lastEndedAt);
      const prompt = step.usage?.promptTokens ?? 0;
      const cached = step.usage?.cachedTokens ?? 0;
      const hitRate = prompt > 0 ? cached / prompt : 0;
      const ttft = step.firstTokenAt !== null ? secs(step.firstTokenAt - step.arrivedAt) : 0;

      s.steps++;
      s.prefill += prefill;
      s.decode += decode;
      s.pause += pause;
      s.tool += tool;
      s.hitRate += hitRate;
      s.ttft += ttft;
      s.prompt += prompt;
      s.completion += step.usage?.completionTokens ?? 0;
      s.cached += cached;
      s.lastEndedAt = step.endedAt;

      const row = [
        csvField(step.programId),
        s.steps,
        round(prefill),
        round(decode),
        round(pause),
        round(tool),
        round(hitRate),
        round(step.endedAt / 1000),
        prompt,
        step.usage?.completionTokens ?? 0,
        cached,
        round(ttft),
        step.outcome,
      ];
      out.write(`${row.join(",")}\n`);
    },
    profiles() {
      const result: Record<string, ProgramProfile> = {};
      for (const [id, s] of programs) result[id] = summary(s);
      return result;
    },
    profile(id) {
      const s = programs.get(id);
      return s ? summary(s) : undefined;
    },
    close() {
      return new Promise((resolve) => out.end(() => resolve()));
    },
  };
}
