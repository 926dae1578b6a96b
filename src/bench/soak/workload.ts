/**
 * The soak's workload: the DeepSeek and Gemini traces beside short agent programs, written as
 * a trace of their own and mixed by `--trace-share`.
 */
import { writeFileSync } from "node:fs";
import { createRng } from "../../workload/prng.ts";

/** Short programs in the trace the soak writes (the closed loop cycles through them). */
export const SHORT_PROGRAMS = 500;

/**
 * Short agent programs (1–3 calls, a few hundred tokens of prompt, 8–32 tokens out, 0.2–3 s of
 * tool time in the modelled system), as trace lines: what a fleet's program count is mostly
 * made of, and what lets two simulated backends on two vCPUs serve tens of programs a second.
 * Each call's prompt is the last one's plus its answer and a tool result, as an agent's grows.
 */
export function shortTraceLines(seed: number, count: number): string[] {
  const rng = createRng(seed * 7919 + 1);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const steps = [];
    let prompt = rng.int(300, 800);
    const n = rng.int(1, 3);
    for (let s = 0; s < n; s++) {
      const out = rng.int(8, 32);
      steps.push({ prompt_tokens: prompt, completion_tokens: out, tool_ms: rng.int(200, 3000) });
      prompt += out + rng.int(50, 150);
    }
    lines.push(JSON.stringify({ id: `short-${i}`, steps }));
  }
  return lines;
}

/** The short programs' trace, written to `file` (JSON Lines). */
export function writeShortTrace(file: string, seed: number, count = SHORT_PROGRAMS): void {
  writeFileSync(file, `${shortTraceLines(seed, count).join("\n")}\n`);
}

/**
 * The `mix:` workload argument: the two traces share `traceShare` equally, the short programs
 * in `shortTrace` take the rest. A mix's weights are > 0, so a share of 0 or 1 leaves its side
 * out.
 */
export function soakMix(traceShare: number, shortTrace: string): string {
  const parts = [
    ...(traceShare > 0 ? [`deepseek=${traceShare / 2}`, `gemini=${traceShare / 2}`] : []),
    ...(traceShare < 1 ? [`${shortTrace}=${1 - traceShare}`] : []),
  ];
  return `mix:${parts.join(",")}`;
}
