import assert from "node:assert/strict";
import { execFile, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const LAUNCHER = join(ROOT, "src", "launch.mjs");
const { version } = (await import("../../package.json", { with: { type: "json" } })).default as {
  version: string;
};

test("on a Node that runs TypeScript the launcher runs maitred in its own process, and prints only the answer", () => {
  const run = spawnSync(process.execPath, [LAUNCHER, "--version"], { encoding: "utf8" });
  assert.equal(run.status, 0);
  assert.equal(run.stdout.trim(), version);
  assert.equal(run.stderr, "", "no warning on the happy path");
});

/** A command's exit code and output, run without blocking: two such runs overlap. */
function run(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { encoding: "utf8" }, (err, stdout, stderr) =>
      resolve({
        status: err === null ? 0 : typeof err.code === "number" ? err.code : null,
        stdout,
        stderr,
      }),
    );
  });
}

test("on a Node that cannot, it starts the pinned Node 24 and passes its exit code on", async () => {
  const node = ["--no-experimental-strip-types", LAUNCHER];
  const [ok, bad] = await Promise.all([
    run([...node, "--version"]),
    run([...node, "serve", "--port", "eighty"]),
  ]);
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stdout.trim(), version);
  assert.equal(ok.stderr, "");
  assert.equal(bad.status, 2, "a bad flag's exit code comes through");
  assert.match(bad.stderr, /port: must be a number/);
});

test("with no Node 24 to be found, it says in one line what to do and exits 1", () => {
  // A copy of the launcher outside the project: no `node` package can be found from there.
  const dir = mkdtempSync(join(tmpdir(), "maitred-launch-"));
  try {
    mkdirSync(join(dir, "src"));
    copyFileSync(LAUNCHER, join(dir, "src", "launch.mjs"));
    const run = spawnSync(
      process.execPath,
      ["--no-experimental-strip-types", join(dir, "src", "launch.mjs"), "--help"],
      { encoding: "utf8" },
    );
    assert.equal(run.status, 1);
    assert.equal(run.stdout, "");
    assert.equal(run.stderr.trim().split("\n").length, 1, run.stderr);
    assert.match(run.stderr, /maitred needs Node 24 .*run `npm install` in .*or install Node 24/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("started by npm, serve stops, draining, once npm's shell is gone", async () => {
  // npm runs a command as `sh -c …` and passes a SIGTERM to that shell only; the trailing `:`
  // keeps the shell from exec'ing node, as npm's shell does not.
  const sh = spawn(
    "sh",
    [
      "-c",
      `"${process.execPath}" "${LAUNCHER}" serve --backends sim:1 --host 127.0.0.1 --port 0 --log-level info; :`,
    ],
    { env: { ...process.env, npm_command: "exec" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  sh.stderr.on("data", (b: Buffer) => {
    stderr += b.toString();
  });
  const closed = once(sh.stdout, "close");
  let stdout = "";
  await new Promise<void>((resolve) => {
    sh.stdout.on("data", (b: Buffer) => {
      stdout += b.toString();
      if (stdout.includes("maitred is serving on")) resolve();
    });
  });
  sh.kill("SIGKILL");
  // The server holds the pipe's other end: it closes when the server has exited.
  await closed;
  assert.match(stderr, /maitred: SIGTERM received, draining/);
  assert.match(stderr, /"msg":"maitred stopped"/, "it stopped as SIGTERM stops it");
});
