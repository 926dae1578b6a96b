/**
 * `npm test`: the whole suite, split across one Node process per core.
 *
 * Each process runs its share of the test files in one module graph (`--test-isolation=none`):
 * starting a process and loading the sources once per file cost about two thirds of the
 * suite's CPU when every file had its own process. Files are dealt to processes longest first,
 * each to the one with the least so far, so one heavy file does not leave a core idle at the
 * end. "Longest" is the file's time in the last run on this machine (kept under
 * node_modules/.cache); a file not timed yet is weighed by its size. Each process's report is
 * printed whole when it ends.
 *
 * Arguments go to every process (`npm test -- --test-name-pattern=held`); arguments that name
 * test files replace the full list. `TEST_PROCESSES=N` sets the number of processes.
 */
import { spawn } from "node:child_process";
import { globSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";

const CACHE = "node_modules/.cache";
const TIMES = join(CACHE, "test-times.json");
const REPORTER = new URL("./test-times-reporter.ts", import.meta.url).pathname;

const args = process.argv.slice(2);
const named = args.filter((a) => a.endsWith(".test.ts"));
const options = args.filter((a) => !a.endsWith(".test.ts"));
const files = named.length > 0 ? named : globSync("test/**/*.test.ts").sort();
const wanted = Number(process.env.TEST_PROCESSES ?? availableParallelism());
const shards = Math.max(1, Math.min(wanted, files.length));

function readTimes(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(TIMES, "utf8")) as Record<string, number>;
  } catch {
    return {};
  }
}
const times = readTimes();
// Milliseconds per byte over the files timed before, to weigh a file not timed yet.
let timedMs = 0;
let timedBytes = 0;
for (const f of files)
  if (times[f] !== undefined) {
    timedMs += times[f];
    timedBytes += statSync(f).size;
  }
const perByte = timedBytes > 0 ? timedMs / timedBytes : 1;
const weight = (f: string) => times[f] ?? statSync(f).size * perByte;

const loads = Array.from({ length: shards }, () => ({ weight: 0, files: [] as string[] }));
for (const f of [...files].sort((a, b) => weight(b) - weight(a))) {
  const least = loads.reduce((m, l) => (l.weight < m.weight ? l : m));
  least.weight += weight(f);
  least.files.push(f);
}

const env = { ...process.env };
env.NODE_COMPILE_CACHE ??= join(CACHE, "node-compile-cache");
const scratch = join(tmpdir(), `maitred-test-times-${process.pid}`);
mkdirSync(scratch, { recursive: true });

function runShard(shardFiles: string[], n: number): Promise<number> {
  const timesOut = join(scratch, `${n}.json`);
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        "--test",
        "--test-isolation=none",
        "--test-reporter=spec",
        "--test-reporter-destination=stdout",
        `--test-reporter=${REPORTER}`,
        `--test-reporter-destination=${timesOut}`,
        ...options,
        ...shardFiles,
      ],
      { env, stdio: ["ignore", "pipe", "pipe"] },
    );
    const out: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => out.push(b));
    child.on("close", (code, signal) => {
      process.stdout.write(Buffer.concat(out));
      try {
        // A filtered run (a name pattern, say) times only part of each file.
        if (options.length === 0) Object.assign(times, JSON.parse(readFileSync(timesOut, "utf8")));
      } catch {
        // A process that died before its reporter wrote leaves the old times in place.
      }
      resolve(code ?? (signal === null ? 1 : 128));
    });
  });
}

const running = loads.filter((l) => l.files.length > 0).map((l, n) => runShard(l.files, n));
const codes = await Promise.all(running);
rmSync(scratch, { recursive: true, force: true });
try {
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(TIMES, JSON.stringify(times));
} catch {
  // Times are only a hint for the next run.
}
process.exitCode = codes.find((c) => c !== 0) ?? 0;
