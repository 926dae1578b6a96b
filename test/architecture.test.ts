import assert from "node:assert/strict";
import { globSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "src");

/** Every relative import of every source file, as `[importer, imported]` paths under src/. */
function imports(): [string, string][] {
  const out: [string, string][] = [];
  for (const file of globSync("**/*.ts", { cwd: src })) {
    const text = readFileSync(join(src, file), "utf8");
    for (const m of text.matchAll(/^(?:import|export)[^;]*?from "(\.[^"]+)"/gms)) {
      out.push([file, relative(src, join(src, dirname(file), m[1]))]);
    }
  }
  return out;
}

const top = (path: string) => path.split("/")[0];

/** Which top-level folders a folder may not import from: the layers above it. */
const FORBIDDEN: Record<string, string[]> = {
  core: ["runtime", "proxy", "service", "simulate", "backends", "metrics", "cli", "ui"],
  runtime: ["proxy", "service", "simulate", "cli"],
  proxy: ["service", "simulate", "cli"],
  service: ["cli"],
  simulate: ["proxy", "service", "cli"],
  // The shadow core sits on the run loop: the router and the simulator both attach it.
  shadow: ["proxy", "service", "simulate", "cli", "metrics", "ui", "backends"],
};

test("imports run down the layers: core ← runtime ← proxy ← service ← cli; simulate beside proxy", () => {
  const all = imports();
  assert.ok(all.length > 100, `found only ${all.length} imports; the scan is broken`);
  const wrong = all.filter(([from, to]) => FORBIDDEN[top(from)]?.includes(top(to)));
  assert.deepEqual(
    wrong.map(([from, to]) => `${from} → ${to}`),
    [],
  );
});

test("the core imports nothing outside itself but the error types, which import nothing", () => {
  const wrong = imports().filter(
    ([from, to]) =>
      (top(from) === "core" && top(to) !== "core" && to !== "errors.ts") || from === "errors.ts",
  );
  assert.deepEqual(
    wrong.map(([from, to]) => `${from} → ${to}`),
    [],
  );
});

test("the core uses no Node module and no package: it is pure", () => {
  const wrong: string[] = [];
  for (const file of globSync("core/**/*.ts", { cwd: src })) {
    const text = readFileSync(join(src, file), "utf8");
    for (const m of text.matchAll(/^(?:import|export)[^;]*?from "([^."][^"]*)"/gms))
      wrong.push(`${file} → ${m[1]}`);
  }
  assert.deepEqual(wrong, []);
});
