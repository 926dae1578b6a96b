/**
 * The real agent CLIs through maitred. Starts `maitred serve --backends sim:2` (its own
 * process) and, for each CLI that is installed, runs one non-interactive task through it with
 * no change to the CLI beyond its base URL:
 *
 * - Claude Code (npm `@anthropic-ai/claude-code`): `claude -p <prompt> --model <served>` with
 *   `ANTHROPIC_BASE_URL` set to the router (Anthropic Messages API);
 * - Codex CLI (npm `@openai/codex`): `codex exec --skip-git-repo-check <prompt>` with a
 *   `$CODEX_HOME/config.toml` whose provider is the router, `wire_api = "responses"` (OpenAI
 *   Responses API).
 *
 * Each passes when the CLI exits 0 having printed an answer, every request it sent was
 * answered 200, and all of them were one program (the id the CLI's own session names, read by
 * the router from its headers): listed in /programs, or released by the likely-done rule once
 * its final answer came. Installs nothing: a CLI not found is reported and skipped.
 *
 *   npx node scripts/check-agent-clis.ts [--prefix DIR] [--prompt "say hi"]
 *       [--tool-call-share 0] [--timeout 300]
 *
 * `--prefix DIR` is a folder where the two packages are installed (`npm install
 * @anthropic-ai/claude-code @openai/codex` run in DIR; keep it outside this repository);
 * without it the CLIs are looked for on PATH. `--tool-call-share` is the simulated model's
 * share of answers that call one of the CLI's tools (default 0: text answers, so nothing the
 * CLI runs comes from a random model; above 0 the CLIs run their agent loops over several
 * requests, their tool calls made of random words, in a scratch folder). Each CLI runs with a
 * scratch HOME (and CODEX_HOME), so nothing of the user's own settings is read or written.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { stopProcess } from "../src/bench/maitred-process.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";
import { positive, share } from "../src/config/values.ts";

const SPEC = {
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
const { values: a } = scriptArgs(SPEC);
const TIMEOUT_MS = Number(a.timeout) * 1000;
const MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));

interface LogLine {
  msg?: string;
  url?: string;
  method?: string;
  path?: string;
  status?: number;
  programId?: string | null;
}

/** `maitred serve` in front of two simulated backends; its JSON log lines are kept. */
async function startRouter(scratch: string) {
  const yaml = join(scratch, "maitred.yaml");
  writeFileSync(yaml, `sim:\n  tool-call-share: ${Number(a["tool-call-share"])}\n`);
  const args = ["serve", "--backends", "sim:2", "--host", "127.0.0.1", "--port", "0"];
  const child = spawn(process.execPath, [MAIN, ...args, "--log-level", "info", "--config", yaml], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  const lines: LogLine[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stderr as NodeJS.ReadableStream }).on("line", (text) => {
      try {
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        if (line.msg === "maitred listening" && typeof line.url === "string") resolve(line.url);
      } catch {
        // not a log line
      }
    });
    child.once("exit", (code) => reject(new Error(`maitred serve exited (${code})`)));
  });
  return { url, lines, child };
}

/** The CLI's executable: in `--prefix`'s node_modules/.bin, else on PATH; null when absent. */
function findCli(name: string): string | null {
  const dirs =
    a.prefix !== undefined
      ? [join(a.prefix, "node_modules", ".bin")]
      : (process.env.PATH ?? "").split(delimiter);
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

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    const child: ChildProcess = spawn(file, args, { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => (stdout += d));
    child.stderr?.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function json(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json().catch(() => null) };
}

async function releasedCount(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /maitred_likely_done_total\{outcome="released"\} (\d+)/.exec(text);
  return m === null ? 0 : Number(m[1]);
}

interface Cli {
  name: string;
  pkg: string;
  path: string;
  /** The command line and environment of one task against the router at `url`. */
  command(url: string, model: string, home: string): { args: string[]; env: NodeJS.ProcessEnv };
}

const CLIS: Cli[] = [
  {
    name: "claude",
    pkg: "@anthropic-ai/claude-code",
    path: "/v1/messages",
    command: (url, model, home) => ({
      args: ["-p", a.prompt, "--model", model],
      env: {
        PATH: process.env.PATH,
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
      const config = `model = ${JSON.stringify(model)}\nmodel_provider = "local"\n[model_providers.local]\nname = "local"\nbase_url = "${url}/v1"\nenv_key = "LOCAL_KEY"\nwire_api = "responses"\n`;
      mkdirSync(codexHome, { recursive: true });
      writeFileSync(join(codexHome, "config.toml"), config);
      return {
        args: ["exec", "--skip-git-repo-check", a.prompt],
        env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: codexHome, LOCAL_KEY: "x" },
      };
    },
  },
];

const scratch = mkdtempSync(join(tmpdir(), "maitred-clis-"));
const router = await startRouter(scratch);
let failed = false;
try {
  const models = (await json(`${router.url}/v1/models`)).body as { data: { id: string }[] };
  const model = models.data[0].id;
  console.log(`maitred ${router.url} in front of sim:2 serving ${model}`);
  for (const cli of CLIS) {
    const file = findCli(cli.name);
    if (file === null) {
      console.log(
        `${cli.name}: not installed; run \`npm install ${cli.pkg}\` in a folder outside this repository and pass --prefix <folder>`,
      );
      continue;
    }
    progress(`${cli.name}: running one task (at most ${a.timeout} s)`);
    const version = (await run(file, ["--version"], process.env, scratch)).stdout.trim();
    const home = mkdtempSync(join(scratch, `${cli.name}-`));
    const { args, env } = cli.command(router.url, model, home);
    const from = router.lines.length;
    const releasedBefore = await releasedCount(router.url);
    const result = await run(file, args, env, home);
    const requests = router.lines
      .slice(from)
      .filter((l) => l.msg === "request" && l.method === "POST" && l.path === cli.path);
    const ids = new Set(requests.map((r) => r.programId ?? null));
    const id = ids.size === 1 ? [...ids][0] : null;
    const problems: string[] = [];
    if (result.code !== 0) problems.push(`exited ${result.code}: ${result.stderr.slice(-500)}`);
    if (result.stdout.trim() === "") problems.push("printed no answer");
    if (requests.length === 0) problems.push(`sent no ${cli.path} request`);
    const bad = requests.filter((r) => r.status !== 200);
    if (bad.length > 0)
      problems.push(`${bad.length} requests not 200: ${bad.map((r) => r.status)}`);
    if (id === null) problems.push(`not one program: ids ${JSON.stringify([...ids])}`);
    let followed = "";
    if (id !== null) {
      const view = await json(`${router.url}/programs/${encodeURIComponent(id)}`);
      const released = (await releasedCount(router.url)) - releasedBefore;
      const p = view.body as { step_count?: number; likely_done_since?: number | null };
      if (view.status === 200)
        followed = `listed, ${p.step_count} steps, likely done: ${p.likely_done_since !== null}`;
      else if (released > 0) followed = "released as likely done";
      else problems.push("neither listed in /programs nor released as likely done");
    }
    console.log(
      `${cli.name} ${version}: ${requests.length} ${cli.path} requests, program ${id ?? "-"}${followed === "" ? "" : ` (${followed})`}, exit ${result.code}, answer ${JSON.stringify(result.stdout.trim().slice(0, 60))}…`,
    );
    if (problems.length > 0) {
      failed = true;
      for (const p of problems) console.log(`  FAIL ${p}`);
    } else console.log("  ok: completed a turn, followed as one program");
  }
} finally {
  await stopProcess(router.child);
  rmSync(scratch, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
