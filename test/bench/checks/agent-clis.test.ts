import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  AGENT_CLIS_SPEC,
  agentClis,
  type CliRun,
  codexConfig,
  findCli,
  followedAs,
  type LogLine,
  releasedIn,
  turnProblems,
  turnRequests,
} from "../../../src/bench/checks/agent-clis.ts";
import { parseScriptArgs } from "../../../src/bench/script-args.ts";

const ok: CliRun = { code: 0, stdout: "hi there\n", stderr: "" };
const req = (programId: string | null, status = 200, path = "/v1/messages"): LogLine => ({
  msg: "request",
  method: "POST",
  path,
  status,
  programId,
});

describe("the agent CLIs' commands", () => {
  let dir = "";
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "agent-clis-test-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("Claude Code gets the prompt, the served model and the router as its Anthropic base URL, and nothing of the user's", () => {
    const [claude] = agentClis("do it", "/bin");
    const { args, env } = claude.command("http://r:1", "m-1", "/scratch/home");
    assert.deepEqual(args, ["-p", "do it", "--model", "m-1"]);
    assert.equal(env.ANTHROPIC_BASE_URL, "http://r:1");
    assert.equal(env.HOME, "/scratch/home");
    assert.equal(env.PATH, "/bin");
    assert.equal(claude.path, "/v1/messages");
  });

  it("Codex gets a config.toml in its scratch CODEX_HOME whose only provider is the router, in the Responses API", () => {
    const codex = agentClis("do it", "/bin")[1];
    const { args, env } = codex.command("http://r:1", "m-1", dir);
    assert.deepEqual(args, ["exec", "--skip-git-repo-check", "do it"]);
    assert.equal(env.CODEX_HOME, join(dir, ".codex"));
    const toml = readFileSync(join(dir, ".codex", "config.toml"), "utf8");
    assert.equal(toml, codexConfig("http://r:1", "m-1"));
    assert.match(toml, /^base_url = "http:\/\/r:1\/v1"$/m);
    assert.match(toml, /^wire_api = "responses"$/m);
    assert.match(toml, /^model = "m-1"$/m);
  });

  it("a CLI is found in --prefix's node_modules/.bin, else on PATH, only when executable", () => {
    const bin = join(dir, "node_modules", ".bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "claude"), "#!/bin/sh\n");
    chmodSync(join(bin, "claude"), 0o755);
    writeFileSync(join(bin, "codex"), "not executable");
    assert.equal(findCli("claude", dir), join(bin, "claude"));
    assert.equal(findCli("codex", dir), null);
    assert.equal(
      findCli("claude", undefined, ["/nowhere", bin].join(delimiter)),
      join(bin, "claude"),
    );
    assert.equal(findCli("claude", undefined, ""), null);
  });
});

describe("judging one CLI's task", () => {
  it("passes a task that answered with every request 200 and one program", () => {
    const lines = [req("s-1"), { msg: "tick" }, req("s-1"), req("other", 200, "/v1/responses")];
    assert.deepEqual(turnProblems("/v1/messages", ok, lines), []);
    const t = turnRequests(lines, "/v1/messages");
    assert.equal(t.requests.length, 2);
    assert.equal(t.id, "s-1");
  });

  it("names each thing wrong: the exit, no answer, requests not 200, more than one program", () => {
    const run: CliRun = { code: 1, stdout: "  \n", stderr: "boom" };
    const lines = [req("a"), req("b", 503)];
    assert.deepEqual(turnProblems("/v1/messages", run, lines), [
      "exited 1: boom",
      "printed no answer",
      "1 requests not 200: 503",
      'not one program: ids ["a","b"]',
    ]);
  });

  it("a task that sent nothing is not one program either", () => {
    assert.deepEqual(turnProblems("/v1/responses", ok, [req("a")]), [
      "sent no /v1/responses request",
      "not one program: ids []",
    ]);
    assert.equal(turnRequests([req(null), req(null)], "/v1/messages").id, null);
  });

  it("a program is followed when listed in /programs or released as likely done, not otherwise", () => {
    const listed = { status: 200, body: { step_count: 3, likely_done_since: 12 } };
    assert.deepEqual(followedAs(listed, 0), { followed: "listed, 3 steps, likely done: true" });
    assert.deepEqual(followedAs({ status: 404, body: null }, 1), {
      followed: "released as likely done",
    });
    assert.deepEqual(followedAs({ status: 404, body: null }, 0), {
      problem: "neither listed in /programs nor released as likely done",
    });
  });

  it("reads the released count off /metrics, 0 when the counter has no released series", () => {
    const text =
      'maitred_likely_done_total{outcome="kept"} 4\nmaitred_likely_done_total{outcome="released"} 7\n';
    assert.equal(releasedIn(text), 7);
    assert.equal(releasedIn("# nothing yet\n"), 0);
  });
});

it("check:agent-clis's flags: a share out of [0, 1] is refused before anything starts", () => {
  const r = parseScriptArgs(AGENT_CLIS_SPEC, []);
  assert.ok(!r.help);
  assert.equal(r.values.prompt, "say hi");
  assert.equal(r.parsed.timeout, 300);
  assert.throws(
    () => parseScriptArgs(AGENT_CLIS_SPEC, ["--tool-call-share", "2"]),
    /--tool-call-share: must be between 0 and 1/,
  );
});
