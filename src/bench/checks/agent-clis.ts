/**
 * The agent CLIs `check:agent-clis` runs through maitred, and how one task's run is judged.
 * Each CLI is changed in nothing but its base URL: Claude Code through `ANTHROPIC_BASE_URL`
 * (Anthropic Messages API), Codex through a `$CODEX_HOME/config.toml` whose provider is the
 * router (OpenAI Responses API). Each runs with a scratch HOME (and CODEX_HOME), so nothing of
 * the user's own settings is read or written.
 */
import { accessSync, constants, mkdirSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { positive, share } from "../../config/values.ts";
import type { ScriptSpec } from "../script-args.ts";

export const AGENT_CLIS_SPEC = {
  name: "check:agent-clis",
  summary:
    "The real agent CLIs (Claude Code, Codex) through `maitred serve --backends sim:2`: each installed one runs a task; pass when it answers, every request is 200 and all are one program.",
  runtime:
    "not timed; a few seconds to start the router, then as long as each installed CLI takes (at most --timeout each); a CLI not installed is skipped",
  flags: {
    prefix: {
      arg: "<dir>",
      defaultText: "the CLIs on PATH",
      description: "a folder where @anthropic-ai/claude-code and @openai/codex are installed",
    },
    prompt: { arg: "<text>", default: "say hi", description: "the task given to each CLI" },
    "tool-call-share": {
      arg: "<share>",
      default: "0",
      description: "share of the simulated model's answers that call one of the CLI's tools",
      check: share(),
    },
    timeout: {
      arg: "<s>",
      default: "300",
      description: "seconds a CLI may run before it is killed",
      check: positive(),
    },
  },
} satisfies ScriptSpec;

export interface AgentCli {
  name: string;
  pkg: string;
  /** The API path its requests take. */
  path: string;
  /** The command line and environment of one task against the router at `url`. */
  command(url: string, model: string, home: string): { args: string[]; env: NodeJS.ProcessEnv };
}

/** Codex's configuration: the router as its only provider, spoken to in the Responses API. */
export const codexConfig = (url: string, model: string) =>
  `model = ${JSON.stringify(model)}\nmodel_provider = "local"\n[model_providers.local]\nname = "local"\nbase_url = "${url}/v1"\nenv_key = "LOCAL_KEY"\nwire_api = "responses"\n`;

/** The CLIs, each given `prompt` as its task; `path` is the PATH their processes get. */
export function agentClis(prompt: string, path = process.env.PATH): AgentCli[] {
  return [
    {
      name: "claude",
      pkg: "@anthropic-ai/claude-code",
      path: "/v1/messages",
      command: (url, model, home) => ({
        args: ["-p", prompt, "--model", model],
        env: {
          PATH: path,
          HOME: home,
          ANTHROPIC_BASE_URL: url,
          ANTHROPIC_API_KEY: "anything",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          DISABLE_TELEMETRY: "1",
        },
      }),
    },
    {
      name: "codex",
      pkg: "@openai/codex",
      path: "/v1/responses",
      command: (url, model, home) => {
        const codexHome = join(home, ".codex");
        mkdirSync(codexHome, { recursive: true });
        writeFileSync(join(codexHome, "config.toml"), codexConfig(url, model));
        return {
          args: ["exec", "--skip-git-repo-check", prompt],
          env: { PATH: path, HOME: home, CODEX_HOME: codexHome, LOCAL_KEY: "x" },
        };
      },
    },
  ];
}

/** The CLI's executable: in `prefix`'s node_modules/.bin, else on `path`; null when absent. */
export function findCli(name: string, prefix: string | undefined, path = process.env.PATH) {
  const dirs =
    prefix !== undefined ? [join(prefix, "node_modules", ".bin")] : (path ?? "").split(delimiter);
  for (const dir of dirs) {
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/** A JSON line of the router's log, as far as the check reads it. */
export interface LogLine {
  msg?: string;
  url?: string;
  method?: string;
  path?: string;
  status?: number;
  programId?: string | null;
}

/** How a CLI's process ended. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Programs the likely-done rule has released, from the router's /metrics text. */
export function releasedIn(metrics: string): number {
  const m = /maitred_likely_done_total\{outcome="released"\} (\d+)/.exec(metrics);
  return m === null ? 0 : Number(m[1]);
}

/** One task's requests (its API's POSTs in the log lines since it started) and their program. */
export function turnRequests(lines: readonly LogLine[], path: string) {
  const requests = lines.filter(
    (l) => l.msg === "request" && l.method === "POST" && l.path === path,
  );
  const ids = new Set(requests.map((r) => r.programId ?? null));
  return { requests, ids, id: ids.size === 1 ? [...ids][0] : null };
}

/** What was wrong with a task: it must exit 0 with an answer, every request 200, one program. */
export function turnProblems(path: string, result: CliRun, lines: readonly LogLine[]): string[] {
  const { requests, ids, id } = turnRequests(lines, path);
  const problems: string[] = [];
  if (result.code !== 0) problems.push(`exited ${result.code}: ${result.stderr.slice(-500)}`);
  if (result.stdout.trim() === "") problems.push("printed no answer");
  if (requests.length === 0) problems.push(`sent no ${path} request`);
  const bad = requests.filter((r) => r.status !== 200);
  if (bad.length > 0) problems.push(`${bad.length} requests not 200: ${bad.map((r) => r.status)}`);
  if (id === null) problems.push(`not one program: ids ${JSON.stringify([...ids])}`);
  return problems;
}

/**
 * How the router followed the task's program: still listed in /programs (its view, `status`
 * 200), or released by the likely-done rule once its final answer came; else a problem.
 */
export function followedAs(
  view: { status: number; body: unknown },
  released: number,
): { followed: string } | { problem: string } {
  const p = view.body as { step_count?: number; likely_done_since?: number | null };
  if (view.status === 200)
    return {
      followed: `listed, ${p.step_count} steps, likely done: ${p.likely_done_since !== null}`,
    };
  if (released > 0) return { followed: "released as likely done" };
  return { problem: "neither listed in /programs nor released as likely done" };
}
