import { ConfigError } from "../errors.ts";

/**
 * The JSONL agent-trace format (src/workload/traces/README.md): one program per line,
 * `{"id", "source"?, "exit_status"?, "steps":[{"prompt_tokens","completion_tokens",
 * "tool_ms"?, "llm_ms"?, "human_ms"?}]}`. Fields a source lacks are absent, never guessed,
 * so `tool_ms` is optional here and filled later from a tool model. Unknown fields are
 * ignored so that newer files still load.
 */

export interface TraceStep {
  promptTokens: number;
  completionTokens: number;
  toolMs?: number;
  humanMs?: number;
  llmMs?: number;
}

export interface TraceProgram {
  id: string;
  source?: string;
  exitStatus?: string;
  steps: TraceStep[];
}

/** Every bad line fails the same way: the field is `file:line`, so the CLI names both. */
function lineError(file: string, line: number, message: string): ConfigError {
  return new ConfigError(`${file}:${line}`, message);
}

type Check = (value: unknown) => boolean;
const isCount: Check = (v) => typeof v === "number" && Number.isInteger(v) && v >= 0;
const isMs: Check = (v) => typeof v === "number" && Number.isFinite(v) && v >= 0;

function optionalMs(
  step: Record<string, unknown>,
  key: string,
  fail: (m: string) => never,
): number | undefined {
  const v = step[key];
  if (v === undefined) return undefined;
  if (!isMs(v))
    fail(`${key} must be a non-negative number of milliseconds, got ${JSON.stringify(v)}`);
  return v as number;
}

function parseStep(raw: unknown, where: string, fail: (m: string) => never): TraceStep {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    fail(`${where} must be an object`);
  }
  const step = raw as Record<string, unknown>;
  const prompt = step.prompt_tokens;
  const completion = step.completion_tokens;
  if (!isCount(prompt) || (prompt as number) < 1) {
    fail(`${where}.prompt_tokens must be a positive integer, got ${JSON.stringify(prompt)}`);
  }
  if (!isCount(completion)) {
    fail(
      `${where}.completion_tokens must be a non-negative integer, got ${JSON.stringify(completion)}`,
    );
  }
  const sub = (m: string) => fail(`${where}.${m}`);
  const out: TraceStep = { promptTokens: prompt as number, completionTokens: completion as number };
  const toolMs = optionalMs(step, "tool_ms", sub);
  const humanMs = optionalMs(step, "human_ms", sub);
  const llmMs = optionalMs(step, "llm_ms", sub);
  if (toolMs !== undefined) out.toolMs = toolMs;
  if (humanMs !== undefined) out.humanMs = humanMs;
  if (llmMs !== undefined) out.llmMs = llmMs;
  return out;
}

/** Parse one line (1-based `line` for messages). */
export function parseTraceLine(text: string, file: string, line: number): TraceProgram {
  const fail = (message: string): never => {
    throw lineError(file, line, message);
  };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    fail(`not valid JSON (${(err as Error).message})`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    fail("a trace line must be a JSON object with `id` and `steps`");
  }
  const obj = raw as Record<string, unknown>;
  if (typeof obj.id !== "string" || obj.id.length === 0) fail("`id` must be a non-empty string");
  if (!Array.isArray(obj.steps) || obj.steps.length === 0) {
    fail("`steps` must be a non-empty array");
  }
  const steps = (obj.steps as unknown[]).map((s, i) => parseStep(s, `steps[${i}]`, fail));
  const program: TraceProgram = { id: obj.id as string, steps };
  if (typeof obj.source === "string") program.source = obj.source;
  if (typeof obj.exit_status === "string") program.exitStatus = obj.exit_status;
  return program;
}

/** Parse a whole JSONL file; blank lines are skipped, an empty file is an error. */
export function parseTrace(text: string, file: string): TraceProgram[] {
  const programs: TraceProgram[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "") continue;
    programs.push(parseTraceLine(line, file, i + 1));
  }
  if (programs.length === 0) throw new ConfigError(file, "trace file has no programs");
  return programs;
}
