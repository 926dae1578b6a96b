import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { runMaitred } from "../cli/run-maitred.ts";

const NODE = process.execPath;

/** The JSON log lines in `text` (maitred logs one object per line on stderr). */
function logLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a partial last line, or not a log line
    }
  }
  return out;
}

/**
 * `maitred serve` through the `maitred` launcher on a Node that cannot run TypeScript itself
 * (types stripping off stands for an older Node): the launcher starts the pinned Node 24 and
 * passes signals on.
 */
function runServe(args: string[], env: Record<string, string> = {}) {
  const launcher = ["--no-experimental-strip-types", "src/launch.mjs"];
  const child = spawn(NODE, [...launcher, "serve", ...args], {
    cwd: new URL("../../", import.meta.url),
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  const listening = new Promise<string>((resolve) => {
    child.stderr.on("data", (d: string) => {
      stderr += d;
      const ready = logLines(stderr).find((l) => l.msg === "maitred listening");
      if (typeof ready?.url === "string") resolve(ready.url);
    });
  });
  const exited = once(child, "exit") as Promise<[number | null, string | null]>;
  // A server that dies before listening fails the test instead of hanging it.
  const listeningOrExit = Promise.race([
    listening,
    exited.then(([code]) => {
      throw new Error(`serve exited with ${code} before listening: ${stderr}`);
    }),
  ]);
  return { child, listening: listeningOrExit, exited, stderr: () => stderr };
}

// Flag and environment validation runs in this process (src/cli/run-cli.ts, what src/main.ts
// runs); the one spawned `maitred serve` below shows the executable starts, serves and stops.

test("an invalid flag exits with code 2 and names the field", async () => {
  const run = await runMaitred(["serve", "--port", "eighty"]);
  assert.equal(run.code, 2);
  assert.match(
    run.stderr,
    /invalid configuration: port: must be a number, got "eighty" \(from --port\)/,
  );
});

test("an invalid environment twin exits with code 2 and names the variable", async () => {
  const run = await runMaitred(["serve"], { MAITRED_SCHEDULER_INTERVAL: "often" });
  assert.equal(run.code, 2);
  assert.match(run.stderr, /scheduler-interval: .*MAITRED_SCHEDULER_INTERVAL/);
});

test("an unknown --queue-policy exits with code 2 and names the field", async () => {
  const run = await runMaitred(["serve", "--priority", "--queue-policy", "lifo"]);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /queue-policy: must be one of ta, fcfs, priority-fcfs, sjf/);
});

test("serve --priority --backends sim:1, started by the launcher, seats requests by class, says so, exports its process metrics, and exits 0 on a SIGTERM sent to the launcher", async () => {
  const run = runServe(
    [
      "--priority",
      "--backends",
      "sim:1",
      "--host",
      "127.0.0.1",
      "--port",
      "0",
      "--log-level",
      "info",
    ],
    { MAITRED_QUEUE_POLICY: "fcfs" },
  );
  try {
    const url = await run.listening;
    // JSON.parse keeps the last of a repeated key, so the raw line is searched for the key.
    const raw = run
      .stderr()
      .split("\n")
      .find((l) => l.includes('"maitred listening"'));
    assert.equal(raw?.match(/"cell":/g)?.length, 1, `want cell named once in ${raw}`);
    const on = logLines(run.stderr()).find((l) => l.msg === "priority classes on");
    assert.equal(on?.queuePolicy, "fcfs");
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-priority": "interactive" },
      body: JSON.stringify({
        model: "meta-llama/Llama-3.1-8B-Instruct",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 2,
        program_id: "cli",
      }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-maitred-class"), "interactive");
    await res.arrayBuffer();
    // `maitred serve` is the router's process: its memory, CPU and event-loop delay are on
    // /metrics under the names every Node dashboard reads.
    const metrics = await (await fetch(`${url}/metrics`)).text();
    for (const name of [
      "process_resident_memory_bytes",
      "process_cpu_seconds_total",
      "nodejs_heap_size_used_bytes",
      "nodejs_eventloop_lag_p99_seconds",
    ])
      assert.match(metrics, new RegExp(`^${name} [0-9.e+-]+$`, "m"), `want ${name} on /metrics`);
    run.child.kill("SIGTERM");
    const [code] = await run.exited;
    assert.equal(code, 0, `stderr: ${run.stderr()}`);
    assert.match(run.stderr(), /maitred stopped/);
  } finally {
    run.child.kill("SIGKILL");
  }
});
