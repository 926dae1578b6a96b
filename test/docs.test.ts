/**
 * The docs as a reader meets them: every relative link leads to a file (and a heading there),
 * every command they show runs as written from a fresh clone on any supported Node (through
 * `npx maitred …` or `npm run <entry> -- …`, with flags the command takes), and every quoted
 * output of a quick deterministic command is what the command prints now.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { docFiles, replaceOutputs, shellWords, unknownFlags } from "../src/cli/flag-rows.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const DOCS = docFiles(ROOT);
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const SCRIPTS = Object.keys(
  (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts,
);

const FENCE = /^ *```([^\n]*)\n([\s\S]*?)^ *```$/gm;
const SPAN = /`([^`\n]+(?:\n[^`\n]+)*)`/g;

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to `-`. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
    .replace(/ /g, "-");
}

const anchorsOf = new Map<string, Set<string>>();

/** The anchors of a document's headings, `-1`, `-2` after a repeated one, as GitHub numbers them. */
function anchors(path: string): Set<string> {
  const known = anchorsOf.get(path);
  if (known) return known;
  const doc = read(path);
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of doc.replace(FENCE, "").matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  anchorsOf.set(path, out);
  return out;
}

/** Relative link targets of a document, code left out: `[text](target)` and images. */
function links(doc: string): string[] {
  const prose = doc.replace(FENCE, "").replace(SPAN, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z]+:/.test(target));
}

/** Command lines a document shows: code lines of shell blocks, and code spans in its prose. */
function commandLines(doc: string): { line: string; globalInstall: boolean }[] {
  const out: { line: string; globalInstall: boolean }[] = [];
  for (const m of doc.matchAll(FENCE)) {
    if (!["", "sh", "bash", "shell", "text", "console"].includes(m[1].trim())) continue;
    const globalInstall = m[2].includes("npm install -g");
    const joined = m[2].replace(/\\\n\s*/g, " ");
    for (const raw of joined.split("\n")) {
      const line = raw
        .trim()
        .replace(/^\$ /, "")
        .replace(/\s#.*$/, "");
      if (line !== "") out.push({ line, globalInstall });
    }
  }
  for (const m of doc.replace(FENCE, "").matchAll(SPAN))
    out.push({ line: m[1].replace(/\s+/g, " ").trim(), globalInstall: false });
  return out;
}

function words(segment: string): string[] {
  try {
    return shellWords(segment);
  } catch {
    return segment.split(/\s+/);
  }
}

/** Why a command line does not run as written from a fresh clone, if it does not. */
function problems(line: string, globalInstall: boolean): string[] {
  const out: string[] = [];
  for (const part of line.split(/&&|\|\||[;|&]/)) {
    const w = words(part.trim().replace(/^([A-Z_]+=\S*\s+)+/, ""));
    // A placeholder (`npx maitred <command> --help`, `npm run <name>`) names no command.
    if (/^(<|…)/.test(w[2] ?? "")) continue;
    if (w[0] === "npx" && w[1] === "maitred") out.push(...unknownFlags(w.slice(2)));
    else if (w[0] === "npm" && w[1] === "run" && w[2] && !SCRIPTS.includes(w[2]))
      out.push(`no npm entry ${w[2]}`);
    else if (/^(npx node|node|node_modules\/\.bin\/node)( --\S+)* scripts\//.test(w.join(" ")))
      out.push("a script runs through its npm entry (npm run <name> -- …), which brings Node 24");
    else if (
      w[0] === "maitred" &&
      /^(serve|simulate|bench|sim-backend|config|cells)$/.test(w[1] ?? "") &&
      w.some((x) => x.startsWith("--")) &&
      !globalInstall
    )
      out.push("inside the clone the command is npx maitred (the package is not on the registry)");
  }
  return out;
}

describe("the docs", () => {
  it("link only to files and headings that exist", () => {
    const broken: string[] = [];
    for (const path of DOCS) {
      const doc = read(path);
      for (const target of links(doc)) {
        const [file, anchor] = target.split("#");
        const to = file === "" ? path : normalize(join(dirname(path), file));
        if (!existsSync(join(ROOT, to))) {
          broken.push(`${path}: ${target} (no file ${to})`);
          continue;
        }
        if (anchor && to.endsWith(".md") && !anchors(to).has(anchor))
          broken.push(`${path}: ${target} (no heading #${anchor} in ${to})`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it("are all reached from README.md through their links, so none is found only by browsing", () => {
    const reached = new Set(["README.md"]);
    const queue = ["README.md"];
    for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
      for (const target of links(read(path))) {
        const to = normalize(join(dirname(path), target.split("#")[0]));
        if (to.endsWith(".md") && !reached.has(to) && existsSync(join(ROOT, to))) {
          reached.add(to);
          queue.push(to);
        }
      }
    }
    assert.deepEqual(
      DOCS.filter((path) => !reached.has(path)),
      [],
      "link these from README's Read on table or from a document it links",
    );
  });

  it("show only commands that run as written from a fresh clone", () => {
    const wrong: string[] = [];
    for (const path of DOCS)
      for (const { line, globalInstall } of commandLines(read(path)))
        for (const why of problems(line, globalInstall)) wrong.push(`${path}: ${line}: ${why}`);
    assert.deepEqual(wrong, []);
  });

  it("quote what their quick deterministic commands print now (npm run readme:flags)", async () => {
    for (const path of DOCS) {
      const doc = read(path);
      if (!doc.includes("<!-- output")) continue;
      assert.equal(
        await replaceOutputs(doc, { slow: false }),
        doc,
        `${path}: a quoted output is stale`,
      );
    }
  });
});
