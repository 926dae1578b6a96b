import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

/** The lightest entry script: it imports only the entry and its relay (src/bench/overhead/tcp-relay.ts). */
const TCP_RELAY = fileURLToPath(new URL("../../scripts/tcp-relay.ts", import.meta.url));

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [TCP_RELAY, ...args], (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : (err.code as number | null), stdout, stderr }),
    );
  });
}

describe("an entry script's command line", () => {
  it("--help prints the usage on stdout and exits 0 without starting anything", async () => {
    const r = await run(["--help"]);
    assert.equal(r.code, 0, `stderr: ${r.stderr}`);
    assert.ok(r.stdout.startsWith("Usage: node scripts/tcp-relay.ts <host:port>\n"), r.stdout);
    assert.doesNotMatch(r.stdout, /"url":"http/, "the relay started: it printed its URL");
    assert.equal(r.stderr, "");
  });

  it("a bad flag is one line on stderr, naming the script, and exit code 2", async () => {
    const r = await run(["--bogus"]);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, "tcp-relay: unknown flag --bogus; see --help\n");
    assert.equal(r.stdout, "");
  });

  it("a check only the script can make ends the same way", async () => {
    const r = await run(["no-port"]);
    assert.equal(r.code, 2);
    assert.equal(
      r.stderr,
      'tcp-relay: <host:port> must be a host and a port, got "no-port"; see --help\n',
    );
  });
});
