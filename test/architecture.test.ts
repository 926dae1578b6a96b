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
  // Metrics read snapshots of the router's parts; the service wires them in, so nothing that
  // assembles a router (service, cli) or drives one from outside (simulate, bench) is below them.
  metrics: ["service", "simulate", "cli", "bench", "ui"],
  // The bench drives routers from outside, as users run them: through the service or as
  // processes, never by reaching into the proxy or the metrics; the CLI sits on top of it.
  bench: ["proxy", "metrics", "shadow", "ui", "cli"],
};

test("imports run down the layers: core ← runtime ← proxy ← service ← cli; simulate beside proxy; bench and metrics in their places", () => {
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

/**
 * Every relative import of every TypeScript file under src/, test/ and scripts/, as
 * `[importer, imported]` paths from the repository's root.
 */
function importsFromRoot(): [string, string][] {
  const out: [string, string][] = [];
  for (const dir of ["src", "test", "scripts"]) {
    for (const file of globSync(`${dir}/**/*.ts`, { cwd: root })) {
      const text = readFileSync(join(root, file), "utf8");
      for (const m of text.matchAll(/^(?:import|export)[^;]*?from "(\.[^"]+)"/gms)) {
        out.push([file, relative(root, join(root, dirname(file), m[1]))]);
      }
    }
  }
  return out;
}

test("nothing imports from scripts/: a script is an entry, what it needs lives in src/", () => {
  const all = importsFromRoot();
  assert.ok(
    all.some(([from, to]) => from.startsWith("scripts/") && to.startsWith("src/")),
    "found no script importing src/; the scan is broken",
  );
  const wrong = all.filter(([, to]) => to.startsWith("scripts/"));
  assert.deepEqual(
    wrong.map(([from, to]) => `${from} → ${to}`),
    [],
  );
});

test("src/README.md's folder table names every folder of src/ that holds code, and only folders that exist", () => {
  const readme = readFileSync(join(src, "README.md"), "utf8");
  const table = readme.slice(
    readme.indexOf("| folder | owns |"),
    readme.indexOf("## A request's trip"),
  );
  const named = new Set(
    [...table.matchAll(/^\| \[?`src\/([\w/.-]+)`/gm)].map((m) => m[1] as string),
  );
  const withCode = new Set(
    globSync("**/*.ts", { cwd: src })
      .map((f) => dirname(f))
      .filter((d) => d !== "."),
  );
  const missing = [...withCode].filter((d) => !named.has(d)).sort();
  assert.deepEqual(missing, [], "folders with code that src/README.md's table does not name");
  const gone = [...named].filter((d) => !d.endsWith(".ts") && !withCode.has(d)).sort();
  assert.deepEqual(gone, [], "folders src/README.md's table names that hold no code");
});

test("no test file registers a hook at its top level: the suite runs many files in one process, where such a hook is every file's", () => {
  // A top-level before() that starts a router on a virtual clock kept that clock spinning, and
  // its router ticking, through every other file of the process: the suite took 70 % longer.
  const hooked: string[] = [];
  for (const file of globSync("**/*.test.ts", { cwd: join(root, "test") })) {
    const text = readFileSync(join(root, "test", file), "utf8");
    if (/^(before|after|beforeEach|afterEach)\(/m.test(text)) hooked.push(file);
  }
  assert.deepEqual(hooked, [], "wrap these files' tests in a describe() that holds their hooks");
});
