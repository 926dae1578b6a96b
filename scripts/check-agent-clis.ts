/**
 * The real agent CLIs (Claude Code, Codex) through `maitred serve --backends sim:2`: each one
 * installed runs a task and must be answered, every request 200, all of them one program
 * (src/bench/checks/agent-cli-check.ts). `--help` lists the flags.
 */
import { runAgentCliCheck } from "../src/bench/checks/agent-cli-check.ts";
import { AGENT_CLIS_SPEC } from "../src/bench/checks/agent-clis.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";

const { values } = scriptArgs(AGENT_CLIS_SPEC);
process.exitCode = (await runAgentCliCheck(values)) ? 0 : 1;
