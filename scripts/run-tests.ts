/**
 * `npm test`: the whole suite, split across one Node process per core.
 *
 * Each process runs its share of the test files in one module graph (`--test-isolation=none`):
 * starting a process and loading the sources once per file cost about two thirds of the
 * suite's CPU when every file had its own process. Files are dealt to processes longest first,
 * each to the one with the least so far, so one heavy file does not leave a core idle at the
 * end. "Longest" is the file's time in the last run on this machine (kept under
 * node_modules/.cache); a file not timed yet is weighed by its size.
 *
 * Every file must be heard from: a process's times reporter names each file that ran, so a
 * process that stopped early (a `process.exit(0)` in a test, a crash) fails the run with the
 * files it never reported, rather than passing with them skipped. Each process's report is
 * printed when it ends, less the spec reporter's own summary lines; one summary for the whole
 * run comes last (tests, pass, fail, time), then one line per process that failed.
 *
 * Arguments that start with `-` go to every process (`npm test -- --test-name-pattern=held`);
 * the others are test files or directories and replace the full list. `TEST_PROCESSES=N` sets
 * the number of processes.
 */
import { spawn } from "node:child_process";
import {
  existsSync,
  globSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { ShardReport } from "../src/util/shard-report.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CACHE = join(ROOT, "node_modules", ".cache");
const TIMES = join(CACHE, "test-times.json");
const REPORTER = fileURLToPath(new URL("./test-times-reporter.ts", import.meta.url));
const started = performance.now();

function fail(message: string): never {
  process.stderr.write(`run-tests: ${message}\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
if (args.includes("--help") || args.includes("-h")) {
  process.stdout.write(`usage: npm test [-- [node --test options] [test files or directories]]

Runs the test suite, its files dealt across one Node process per core (TEST_PROCESSES=N sets
the number), and prints one summary: tests, pass, fail, time. Options that start with "-" go to
every process (e.g. --test-name-pattern=held); other arguments are test files or directories
and replace the full list (default: test/**/*.test.ts). The whole suite takes 19–22 s on
2 cores.
`);
  process.exit(0);
}
const options = args.filter((a) => a.startsWith("-"));
const named = args.filter((a) => !a.startsWith("-"));
/** Test files as paths from the project root, the form the times are kept under. */
function testFiles(): string[] {
  if (named.length === 0) return globSync("test/**/*.test.ts", { cwd: ROOT }).sort();
  const out: string[] = [];
  for (const arg of named) {
    if (!existsSync(arg)) fail(`no such file or directory: ${arg}`);
    const path = relative(ROOT, arg);
    if (statSync(arg).isDirectory())
      out.push(...globSync(join(path, "**/*.test.ts"), { cwd: ROOT }));
    else out.push(path);
  }
  return [...new Set(out)].sort();
}
const files = testFiles();
if (files.length === 0) fail("no test files found");

const wanted = Number(process.env.TEST_PROCESSES ?? availableParallelism());
if (!Number.isInteger(wanted) || wanted < 1) fail("TEST_PROCESSES must be a whole number ≥ 1");
const shards = Math.min(wanted, files.length);

function readTimes(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(TIMES, "utf8")) as Record<string, number>;
  } catch {
    return {};
  }
}
const times = readTimes();
const size = (f: string) => statSync(join(ROOT, f)).size;
// Milliseconds per byte over the files timed before, to weigh a file not timed yet.
let timedMs = 0;
let timedBytes = 0;
for (const f of files)
  if (times[f] !== undefined) {
    timedMs += times[f];
    timedBytes += size(f);
  }
const perByte = timedBytes > 0 ? timedMs / timedBytes : 1;
const weight = (f: string) => times[f] ?? size(f) * perByte;

const loads = Array.from({ length: shards }, () => ({ weight: 0, files: [] as string[] }));
for (const f of [...files].sort((a, b) => weight(b) - weight(a))) {
  const least = loads.reduce((m, l) => (l.weight < m.weight ? l : m));
  least.weight += weight(f);
  least.files.push(f);
}

const env = { ...process.env };
env.NODE_COMPILE_CACHE ??= join(CACHE, "node-compile-cache");
const scratch = mkdtempSync(join(tmpdir(), "maitred-test-times-"));
// The user's own reporter replaces the spec reporter; the times reporter always runs.
const ownReporter = options.some((o) => o.startsWith("--test-reporter"));
const reporting = ownReporter ? [] : ["--test-reporter=spec", "--test-reporter-destination=stdout"];
const filtered = options.some(
  (o) => o.startsWith("--test-name-pattern") || o.startsWith("--test-skip-pattern"),
);

interface ShardResult {
  n: number;
  code: number;
  why: string | null;
  counts: ShardReport["counts"];
}

/** The spec reporter's closing lines (`ℹ tests 562` …): one summary for the run replaces them. */
const SPEC_SUMMARY =
  /^\u2139 (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) [\d.]+\n/gmu;

function runShard(shardFiles: string[], n: number): Promise<ShardResult> {
  const timesOut = join(scratch, `${n}.json`);
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        "--test",
        "--test-isolation=none",
        ...reporting,
        `--test-reporter=${REPORTER}`,
        `--test-reporter-destination=${timesOut}`,
        ...options,
        ...shardFiles,
      ],
      { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    const out: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => out.push(b));
    child.on("close", (code, signal) => {
      const printed = Buffer.concat(out).toString("utf8");
      process.stdout.write(ownReporter ? printed : printed.replace(SPEC_SUMMARY, ""));
      let heard: Record<string, number> | null = null;
      let counts: ShardReport["counts"] = null;
      try {
        const report = JSON.parse(readFileSync(timesOut, "utf8")) as ShardReport;
        heard = report.times;
        counts = report.counts;
      } catch {
        // No report at all: the process stopped before its reporter wrote.
      }
      const missing = shardFiles.filter((f) => heard?.[f] === undefined);
      // A filtered run (a name pattern) times only part of each file, and may run no test of one.
      if (heard !== null && !filtered)
        for (const f of shardFiles)
          if (!f.startsWith("..") && heard[f] !== undefined) times[f] = heard[f];
      let why: string | null = null;
      if (signal !== null) why = `killed by ${signal}`;
      else if (code !== 0) why = `exited with ${code}`;
      else if (heard === null || (!filtered && missing.length > 0))
        why = `stopped before reporting ${missing.length} of its files: ${missing.join(" ")}`;
      resolve({ n, code: why === null ? 0 : (code ?? 1) || 1, why, counts });
    });
  });
}

const results = await Promise.all(
  loads.filter((l) => l.files.length > 0).map((l, n) => runShard(l.files, n)),
);
rmSync(scratch, { recursive: true, force: true });
try {
  writeFileSync(TIMES, JSON.stringify(times));
} catch {
  // Times are only a hint for the next run.
}
if (!ownReporter) {
  const sum = (k: keyof NonNullable<ShardReport["counts"]>) =>
    results.reduce((acc, r) => acc + (r.counts?.[k] ?? 0), 0);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const unheard = results.filter((r) => r.counts === null).length;
  process.stdout.write(
    `\ntests ${sum("tests")}, pass ${sum("passed")}, fail ${sum("failed")}, ` +
      `cancelled ${sum("cancelled")}, skipped ${sum("skipped")}, todo ${sum("todo")}; ` +
      `${files.length} files in ${results.length} processes, ${seconds} s` +
      (unheard > 0 ? ` (${unheard} process(es) sent no counts)` : "") +
      "\n",
  );
}
for (const r of results)
  if (r.why !== null) process.stderr.write(`run-tests: test process ${r.n + 1} ${r.why}\n`);
process.exitCode = results.find((r) => r.code !== 0)?.code ?? 0;
