/**
 * The live page in a real browser. Starts `maitred serve --backends sim:2` (its own process,
 * small KV caches so programs pause), puts a few agent programs through it, opens `/ui` in
 * Debian's Chromium (headless, driven by playwright-core), and checks that the page logs no
 * console error, that both backends and the programs appear, and that the charts have drawn.
 * Saves a screenshot (default scripts/ui-screenshot.png, the one src/ui/README.md shows).
 *
 *   node scripts/check-ui.ts [--chromium /usr/bin/chromium] [--out scripts/ui-screenshot.png]
 *       [--seconds 30]
 *
 * Needs Chromium (Debian: `apt-get install chromium`); playwright-core's own browser download
 * is not used.
 */
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { abortableSleep, startClosedLoop } from "../src/bench/closed-loop.ts";
import { discoverModel } from "../src/bench/discover-model.ts";
import { startSmallServe } from "../src/bench/maitred-process.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { progress, scriptArgs } from "../src/bench/script-entry.ts";
import { createStepClient } from "../src/bench/step-client.ts";
import { positive } from "../src/config/values.ts";
import { wallClock } from "../src/runtime/clock.ts";
import { loadWorkload, parseWorkloadArg } from "../src/workload/load-workload.ts";

const SPEC = {
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
      default: fileURLToPath(new URL("./ui-screenshot.png", import.meta.url)),
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
const { values: a } = scriptArgs(SPEC);
const TIME_SCALE = 5;
const PROGRAMS = 16;
const never = new AbortController().signal;

const router = await startSmallServe(900, TIME_SCALE);
const browser = await chromium.launch({
  executablePath: a.chromium,
  args: ["--no-sandbox", "--disable-gpu"],
});
const problems: string[] = [];
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

  const backends = await page.locator("#backends tbody tr").count();
  const programs = await page.locator("#programs tbody tr").count();
  const charts = await page.locator(".uplot").count();
  const decisions = await page.locator("#decisions li").count();
  const status = await page.locator("#status").textContent();
  if (backends !== 2) problems.push(`${backends} backend rows, want 2`);
  if (programs === 0) problems.push("no program rows");
  if (charts !== 2) problems.push(`${charts} charts drawn, want 2`);
  if (status !== "live") problems.push(`status "${status}", want "live"`);
  await page.screenshot({ path: a.out, fullPage: false });
  loop.stop();
  await loop.done;
  await client.close();

  console.log(
    `maitred serve --backends sim:2 (900 blocks, time scale ${TIME_SCALE}), ${PROGRAMS} DeepSeek-trace programs, /ui open ${a.seconds} s in ${await browser.version()}`,
  );
  console.log(
    `backend rows ${backends}, program rows ${programs}, charts ${charts}, decisions listed ${decisions}, status "${status}", console errors ${problems.filter((p) => p.startsWith("console") || p.startsWith("page")).length}`,
  );
  console.log(`screenshot: ${a.out}`);
} finally {
  await browser.close();
  await router.close();
}
for (const p of problems) console.log(`PROBLEM: ${p}`);
process.exitCode = problems.length === 0 ? 0 : 1;
