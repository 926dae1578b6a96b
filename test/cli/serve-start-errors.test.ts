import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { test } from "node:test";
import { runMaitred } from "./run-maitred.ts";

/** The one line a start-up error must be: `maitred: …`, no stack frame after it. */
function assertOneLine(stderr: string, mentions: string): void {
  const lines = stderr.trim().split("\n");
  assert.equal(lines.length, 1, `got ${lines.length} lines, want 1:\n${stderr}`);
  assert.match(lines[0] as string, /^maitred: /);
  assert.ok(lines[0]?.includes(mentions), `want it to mention ${mentions}: ${lines[0]}`);
}

test("serve on a port another process holds says so in one line and exits 2", async () => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  const port = (holder.address() as { port: number }).port;
  try {
    const run = await runMaitred([
      "serve",
      "--backends",
      "sim:1",
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--log-level",
      "silent",
    ]);
    assert.equal(run.code, 2);
    assertOneLine(run.stderr, `127.0.0.1:${port} (EADDRINUSE): the address is already in use`);
  } finally {
    holder.close();
  }
});

test("serve with a config path it cannot read as a file says so in one line and exits 2", async () => {
  const dir = mkdtempSync(`${tmpdir()}/maitred-config-`);
  const run = await runMaitred(["serve", "--config", dir]);
  assert.equal(run.code, 2);
  assertOneLine(run.stderr, `cannot read ${dir}`);
});
