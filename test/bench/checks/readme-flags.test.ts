import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import fc from "fast-check";
import {
  type DocParts,
  README_FLAGS_USAGE,
  readmeFlagsRequest,
  runReadmeFlags,
} from "../../../src/bench/checks/readme-flags.ts";

describe("readme:flags's command line", () => {
  it("reads a refresh, a check, one command's table and help", () => {
    assert.deepEqual(readmeFlagsRequest(["--write"]), {
      kind: "refresh",
      check: false,
      slow: false,
    });
    assert.deepEqual(readmeFlagsRequest(["--write", "--check", "--slow"]), {
      kind: "refresh",
      check: true,
      slow: true,
    });
    assert.deepEqual(readmeFlagsRequest(["bench", "compare"]), {
      kind: "table",
      command: "bench compare",
    });
    assert.deepEqual(readmeFlagsRequest(["--bogus", "-x", "--slow"]), {
      kind: "unknown",
      flags: ["--bogus", "-x"],
    });
  });

  it("help wins over anything else on the line", () => {
    fc.assert(
      fc.property(
        fc.array(fc.string()),
        fc.constantFrom("--help", "-h"),
        fc.nat(),
        (args, help, at) => {
          const argv = [...args];
          argv.splice(at % (argv.length + 1), 0, help);
          assert.deepEqual(readmeFlagsRequest(argv), { kind: "help" });
        },
      ),
    );
  });
});

describe("runReadmeFlags over a stand-in repository", () => {
  let root = "";
  /** The generators, standing in for src/cli/flag-rows.ts: a table is `TABLE`, an output `OUT`/`SLOW`. */
  const parts: DocParts = {
    docFiles: () => ["README.md", "src/a.md"],
    flagTable: (command) => `| table of ${command} |`,
    replaceFlagTables: (doc) => doc.replace("<table>", "TABLE"),
    replaceOutputs: async (doc, { slow }) =>
      doc.replace("<out>", "OUT").replace("<slow>", slow ? "SLOW" : "<slow>"),
  };
  const write = (files: Record<string, string>) => {
    for (const [f, text] of Object.entries(files)) writeFileSync(join(root, f), text);
  };
  const read = (f: string) => readFileSync(join(root, f), "utf8");
  before(() => {
    root = mkdtempSync(join(tmpdir(), "readme-flags-test-"));
    mkdirSync(join(root, "src"));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("--check names the stale documents, writes nothing and exits 1", async () => {
    write({ "README.md": "a <table> b", "src/a.md": "current" });
    const r = await runReadmeFlags(["--write", "--check"], root, parts);
    assert.deepEqual(r, { stdout: "stale: README.md\n", stderr: "", exitCode: 1 });
    assert.equal(read("README.md"), "a <table> b");
  });

  it("a refresh rewrites the stale documents, the slow outputs only with --slow", async () => {
    write({ "README.md": "a <table> <slow>", "src/a.md": "<out>" });
    const r = await runReadmeFlags(["--write"], root, parts);
    assert.deepEqual(r, { stdout: "rewritten: README.md, src/a.md\n", stderr: "", exitCode: 0 });
    assert.equal(read("README.md"), "a TABLE <slow>");
    assert.equal(read("src/a.md"), "OUT");
    await runReadmeFlags(["--write", "--slow"], root, parts);
    assert.equal(read("README.md"), "a TABLE SLOW");
    const again = await runReadmeFlags(["--check", "--slow"], root, parts);
    assert.deepEqual(again, {
      stdout: "every generated part is current\n",
      stderr: "",
      exitCode: 0,
    });
  });

  it("prints one command's table, the usage, or the unknown flags with the usage and exit 2", async () => {
    assert.equal((await runReadmeFlags(["serve"], root, parts)).stdout, "| table of serve |\n");
    assert.deepEqual(await runReadmeFlags(["-h"], root, parts), {
      stdout: README_FLAGS_USAGE,
      stderr: "",
      exitCode: 0,
    });
    const bad = await runReadmeFlags(["--nope"], root, parts);
    assert.equal(bad.exitCode, 2);
    assert.equal(bad.stderr, `readme-flags: unknown option --nope\n${README_FLAGS_USAGE}`);
  });
});
