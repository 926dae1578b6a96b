import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { flagRows, replaceFlagTables } from "../src/cli/flag-rows.ts";

const README = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const COMMANDS = ["serve", "sim-backend", "bench", "bench compare", "simulate"];

describe("README documents the CLI", () => {
  for (const command of COMMANDS) {
    it(`has a flag table for maitred ${command} listing every flag`, () => {
      assert.ok(README.includes(`<!-- flags:${command} -->`), `no table marker for ${command}`);
      const missing = flagRows(command)
        .map((r) => r.flags)
        .filter((flags) => !README.includes(`\`${flags}\``));
      assert.deepEqual(missing, [], `README lacks these ${command} flags`);
    });
  }

  it("has flag tables identical to the command tree's help (node scripts/readme-flags.ts --write)", () => {
    assert.equal(replaceFlagTables(README), README, "README flag tables are stale");
  });

  it("keeps the quick-start commands", () => {
    for (const cmd of ["npm install", "npm start", "npm test"])
      assert.ok(README.includes(cmd), cmd);
  });
});
