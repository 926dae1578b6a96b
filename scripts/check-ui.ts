/**
 * The live page in a real browser: /ui of `maitred serve --backends sim:2` under agent
 * programs, in headless Chromium; no console error, the backends, programs and charts shown;
 * saves a screenshot (src/bench/checks/ui-check.ts). Needs Chromium (`apt-get install chromium`).
 */
import { runUiCheck, UI_SPEC } from "../src/bench/checks/ui-check.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";

const { values } = scriptArgs(UI_SPEC);
process.exitCode = (await runUiCheck(values)) ? 0 : 1;
