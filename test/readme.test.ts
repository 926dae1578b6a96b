import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { flagRows } from "../src/cli/flag-rows.ts";

const README = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const COMMANDS = ["serve", "sim-backend", "bench", "bench compare", "simulate"];

describe("README documents the CLI", () => {
  for (const command of COMMANDS) {
    it(`lists every flag of maitred ${command}`, () => {
      const missing = flagRows(command)
        .map((r) => r.flags)
        .filter((flags) => !README.includes(`\`${flags}\``));
      assert.deepEqual(
        missing,
        [],
        `README lacks these ${command} flags; regenerate with node scripts/readme-flags.ts ${command}`,
      );
    });
  }

  it("keeps the quick-start commands", () => {
    for (const cmd of ["npm install", "npm start", "npm test"])
      assert.ok(README.includes(cmd), cmd);
  });
});
