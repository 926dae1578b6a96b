/**
 * `check:agent-clis`: `maitred serve --backends sim:2` as its own process and, for each agent
 * CLI installed, one non-interactive task through it (agent-clis.ts says how each is run and
 * judged). Installs nothing: a CLI not found is reported and skipped.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServeProcess } from "../maitred-process.ts";
import type { ScriptArgs } from "../script-args.ts";
import { progress } from "../script-entry.ts";
import {
  type AGENT_CLIS_SPEC,
  type AgentCli,
  agentClis,
  type CliRun,
  findCli,
  followedAs,
  type LogLine,
  releasedIn,
  turnProblems,
  turnRequests,
} from "./agent-clis.ts";

type Flags = ScriptArgs<typeof AGENT_CLIS_SPEC.flags>["values"];

/** `file args`, killed after `timeoutMs`; its exit code and output. */
function runCli(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  timeoutMs: number,
): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
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

const releasedCount = async (url: string) =>
  releasedIn(await (await fetch(`${url}/metrics`)).text());

/** The router in front of two simulated backends; every JSON line it logs is kept. */
async function startRouter(scratch: string, toolCallShare: number) {
  const yaml = join(scratch, "maitred.yaml");
  writeFileSync(yaml, `sim:\n  tool-call-share: ${toolCallShare}\n`);
  const lines: LogLine[] = [];
  const onLine = (text: string) => {
    try {
      lines.push(JSON.parse(text) as LogLine);
    } catch {
      // not a log line
    }
  };
  const router = await startServeProcess(["--backends", "sim:2", "--config", yaml], { onLine });
  return { ...router, lines };
}

/** One CLI's task through the router: prints its line and any problems; whether it passed. */
async function checkCli(
  cli: AgentCli,
  file: string,
  router: { url: string; lines: LogLine[] },
  model: string,
  scratch: string,
  a: Flags,
): Promise<boolean> {
  const timeoutMs = Number(a.timeout) * 1000;
  progress(`${cli.name}: running one task (at most ${a.timeout} s)`);
  const version = (await runCli(file, ["--version"], process.env, scratch, timeoutMs)).stdout;
  const home = mkdtempSync(join(scratch, `${cli.name}-`));
  const { args, env } = cli.command(router.url, model, home);
  const from = router.lines.length;
  const releasedBefore = await releasedCount(router.url);
  const result = await runCli(file, args, env, home, timeoutMs);
  const lines = router.lines.slice(from);
  const { requests, id } = turnRequests(lines, cli.path);
  const problems = turnProblems(cli.path, result, lines);
  let followed = "";
  if (id !== null) {
    const view = await json(`${router.url}/programs/${encodeURIComponent(id)}`);
    const f = followedAs(view, (await releasedCount(router.url)) - releasedBefore);
    if ("followed" in f) followed = f.followed;
    else problems.push(f.problem);
  }
  console.log(
    `${cli.name} ${version.trim()}: ${requests.length} ${cli.path} requests, program ${id ?? "-"}${followed === "" ? "" : ` (${followed})`}, exit ${result.code}, answer ${JSON.stringify(result.stdout.trim().slice(0, 60))}…`,
  );
  for (const p of problems) console.log(`  FAIL ${p}`);
  if (problems.length === 0) console.log("  ok: completed a turn, followed as one program");
  return problems.length === 0;
}

/** Runs every installed CLI's task; whether all of them passed. */
export async function runAgentCliCheck(a: Flags): Promise<boolean> {
  const scratch = mkdtempSync(join(tmpdir(), "maitred-clis-"));
  let passed = true;
  try {
    const router = await startRouter(scratch, Number(a["tool-call-share"]));
    try {
      const models = (await json(`${router.url}/v1/models`)).body as { data: { id: string }[] };
      const model = models.data[0].id;
      console.log(`maitred ${router.url} in front of sim:2 serving ${model}`);
      for (const cli of agentClis(a.prompt)) {
        const file = findCli(cli.name, a.prefix);
        if (file === null) {
          console.log(
            `${cli.name}: not installed; run \`npm install ${cli.pkg}\` in a folder outside this repository and pass --prefix <folder>`,
          );
          continue;
        }
        if (!(await checkCli(cli, file, router, model, scratch, a))) passed = false;
      }
    } finally {
      await router.close();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return passed;
}
