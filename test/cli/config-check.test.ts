import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { resolveRouterConfig } from "../../src/config/load-config.ts";
import { runMaitred } from "./run-maitred.ts";

const EXAMPLE = fileURLToPath(new URL("../../config/maitred.example.yaml", import.meta.url));

function withFile(text: string, fn: (path: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), "maitred-config-"));
  const path = join(dir, "maitred.yaml");
  writeFileSync(path, text);
  return fn(path).finally(() => rmSync(dir, { recursive: true, force: true }));
}

test("config check names every bad field of a file, one line each, and exits 2", () =>
  withFile(
    "port: eighty\nscheduler-interval: 5\nshedulr: 1\nsim:\n  num-gpu-blocks: lots\n",
    async (path) => {
      const run = await runMaitred(["config", "check", path]);
      assert.equal(run.code, 2);
      assert.equal(run.stdout, "");
      const lines = run.stderr.trim().split("\n");
      assert.equal(lines.length, 4, run.stderr);
      assert.match(lines[0] ?? "", /port: must be a number, got "eighty"/);
      assert.match(lines[1] ?? "", /shedulr: unknown setting/);
      assert.match(
        lines[2] ?? "",
        /sim\.num-gpu-blocks: must be a number, got "lots" \(from .*maitred\.yaml\)$/,
      );
      assert.match(lines[3] ?? "", /3 problems$/);
    },
  ));

test("config check passes the shipped example, and a file that is not YAML is one problem", async () => {
  const ok = await runMaitred(["config", "check", EXAMPLE]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /valid/);
  await withFile("port: [unclosed\n", async (path) => {
    const bad = await runMaitred(["config", "check", path]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /not valid YAML/);
  });
});

test("a misspelt setting in the sim: block stops the router's start instead of being ignored", () => {
  assert.throws(
    () =>
      resolveRouterConfig({
        flags: { backends: "sim:1" },
        configFile: "test.yaml",
        readFile: () => "sim:\n  num-gpu-block: 100\n",
      }),
    /sim\.num-gpu-block: unknown setting; known: model, num-gpu-blocks, .* \(from test\.yaml\)$/,
  );
});
