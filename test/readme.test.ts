import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { docFiles, flagCell, flagRows, replaceFlagTables } from "../src/cli/flag-rows.ts";

const ROOT = new URL("..", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), "utf8");
const README = read("README.md");
/** Where every command's flags are listed (config/README.md "Flags of every command"). */
const FLAGS_DOC = "config/README.md";
const COMMANDS = [
  "serve",
  "sim-backend",
  "bench",
  "bench compare",
  "simulate",
  "cells haproxy-config",
];
/** The front door is read in five minutes; everything else lives in the topic documents. */
const README_MAX_LINES = 300;

describe("README is the front door", () => {
  it(`stays within ${README_MAX_LINES} lines`, () => {
    const lines = README.split("\n").length - (README.endsWith("\n") ? 1 : 0);
    assert.ok(
      lines <= README_MAX_LINES,
      `README.md has ${lines} lines, want ≤ ${README_MAX_LINES}`,
    );
  });

  it("keeps the quick-start commands", () => {
    for (const cmd of ["npm install", "npm start", "npm test", "curl -s localhost:8300/v1/chat"])
      assert.ok(README.includes(cmd), `README lacks ${cmd}`);
  });

  it("is the only Markdown document at the top level, which stays as fixed", () => {
    const top = readdirSync(ROOT).filter((name) => name.endsWith(".md"));
    assert.deepEqual(top, ["README.md"], "topic documents live beside the code they describe");
  });
});

describe(`${FLAGS_DOC} documents every command's flags`, () => {
  const doc = read(FLAGS_DOC);
  for (const command of COMMANDS) {
    it(`has a flag table for maitred ${command} listing every flag`, () => {
      assert.ok(doc.includes(`<!-- flags:${command} -->`), `no table marker for ${command}`);
      const missing = flagRows(command)
        .map((r) => flagCell(r.flags))
        .filter((cell) => !doc.includes(cell));
      assert.deepEqual(missing, [], `${FLAGS_DOC} lacks these ${command} flags`);
    });
  }

  it("has flag tables identical to the command tree's help (npm run readme:flags)", () => {
    for (const path of docFiles(ROOT.pathname)) {
      const text = read(path);
      assert.equal(replaceFlagTables(text), text, `${path}: flag tables are stale`);
    }
  });
});
