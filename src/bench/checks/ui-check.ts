/**
 * `check:ui`: the live page in a real browser. `maitred serve --backends sim:2` (its own
 * process, small KV caches so programs pause) under a few agent programs, `/ui` open in
 * Debian's Chromium (headless, driven by playwright-core; its own browser download is not
 * used); the page must log no console error and show both backends, the programs and the
 * charts. Saves a screenshot (by default the one src/ui/README.md shows).
 */
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { positive } from "../../config/values.ts";
import { wallClock } from "../../runtime/clock.ts";
import { loadWorkload, parseWorkloadArg } from "../../workload/load-workload.ts";
import { abortableSleep, startClosedLoop } from "../closed-loop.ts";
import { discoverModel } from "../discover-model.ts";
import { startSmallServe } from "../maitred-process.ts";
import type { ScriptSpec } from "../script-args.ts";
import { progress } from "../script-entry.ts";
import { createStepClient } from "../step-client.ts";
import { countsLine, type PageCounts, pageProblems } from "./ui-page.ts";

export const UI_SPEC = {
  name: "check:ui",
  summary:
    "The live page in a real browser: /ui of `maitred serve --backends sim:2` under 16 agent programs, in headless Chromium; no console error, both backends, the programs and the charts shown; saves a screenshot.",
  runtime:
    "about 45 s: --seconds (30 s) with /ui open, plus starting the router and Chromium; needs chromium",
  flags: {
    chromium: {
      arg: "<path>",
      default: "/usr/bin/chromium",
      description: "the Chromium executable",
    },
    out: {
      arg: "<file>",
      default: fileURLToPath(new URL("../../../scripts/ui-screenshot.png", import.meta.url)),
      description: "where the screenshot goes",
    },
    seconds: {
      arg: "<s>",
      default: "30",
      description: "how long the page stays open before it is checked",
      check: positive(),
    },
  },
} satisfies ScriptSpec;

const TIME_SCALE = 5;
const PROGRAMS = 16;
const NUM_GPU_BLOCKS = 900;
const never = new AbortController().signal;

/** Runs the check and prints its report and each problem; whether there was none. */
export async function runUiCheck(a: { chromium: string; out: string; seconds: string }) {
  const router = await startSmallServe(NUM_GPU_BLOCKS, TIME_SCALE);
  const problems: string[] = [];
  try {
    const browser = await chromium.launch({
      executablePath: a.chromium,
      args: ["--no-sandbox", "--disable-gpu"],
    });
    try {
      const served = await discoverModel(router.url);
      if (served === null) throw new Error(`no model at ${router.url}`);
      const client = createStepClient({ url: router.url, connections: PROGRAMS });
      const loop = startClosedLoop({
        workload: await loadWorkload(parseWorkloadArg("deepseek", { seed: 3 })),
        client,
        model: served.id,
        concurrency: PROGRAMS,
        timeScale: TIME_SCALE,
        warmupMs: 0,
        durationMs: Number(a.seconds) * 1000 + 10_000,
      });

      const page = await browser.newPage({ viewport: { width: 1500, height: 1100 } });
      page.on("console", (m) => {
        if (m.type() === "error") problems.push(`console error: ${m.text()}`);
      });
      page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
      progress(`/ui open for ${a.seconds} s`);
      const res = await page.goto(`${router.url}/ui`);
      if (res?.status() !== 200) problems.push(`GET /ui answered ${res?.status()}`);
      await abortableSleep(wallClock, Number(a.seconds) * 1000, never);

      const counts: PageCounts = {
        backends: await page.locator("#backends tbody tr").count(),
        programs: await page.locator("#programs tbody tr").count(),
        charts: await page.locator(".uplot").count(),
        decisions: await page.locator("#decisions li").count(),
        status: await page.locator("#status").textContent(),
      };
      problems.push(...pageProblems(counts));
      await page.screenshot({ path: a.out, fullPage: false });
      loop.stop();
      await loop.done;
      await client.close();

      console.log(
        `maitred serve --backends sim:2 (${NUM_GPU_BLOCKS} blocks, time scale ${TIME_SCALE}), ${PROGRAMS} DeepSeek-trace programs, /ui open ${a.seconds} s in ${browser.version()}`,
      );
      const errors = problems.filter((p) => p.startsWith("console") || p.startsWith("page"));
      console.log(countsLine(counts, errors.length));
      console.log(`screenshot: ${a.out}`);
    } finally {
      await browser.close();
    }
  } finally {
    await router.close();
  }
  for (const p of problems) console.log(`PROBLEM: ${p}`);
  return problems.length === 0;
}
