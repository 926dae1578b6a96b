#!/usr/bin/env node
/**
 * The `maitred` command. maitred is TypeScript that Node 24 runs as it is; this launcher is plain
 * JavaScript that any Node from 18 on can start, so `npx maitred` works whatever Node the
 * machine has:
 *   - installed from the registry (under node_modules, where Node strips no types), it loads
 *     the built dist/main.js in this process;
 *   - on a Node that runs TypeScript itself (24), it loads src/main.ts in this process;
 *   - otherwise it starts the Node 24 the project pins (the `node` package, installed by
 *     `npm install`) on src/main.ts, hands it the terminal, passes SIGTERM/SIGINT/SIGHUP on and
 *     exits as it does. The child runs in a process group of its own, so a Ctrl-C reaches it
 *     once, through this launcher, not twice;
 *   - with neither, it says in one line what to do, and exits 1.
 *
 * Under npm (`npx maitred …`, `npm start`) it also stops when npm does (watchParent).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

const SOURCE = fileURLToPath(new URL("./main.ts", import.meta.url));
const ROOT = dirname(dirname(SOURCE));
/**
 * Node strips no types under node_modules: an installed maitred runs its built JavaScript
 * (`npm pack` builds dist/), the repository its sources.
 */
const BUILT = join(ROOT, "dist", "main.js");
const INSTALLED = ROOT.split(sep).includes("node_modules") && existsSync(BUILT);
const MAIN = INSTALLED ? BUILT : SOURCE;

/**
 * Whether this is the Node maitred is built for: 24 or later, stripping TypeScript types on its
 * own (22.18 and 23 can too, but behind a warning, and maitred is not tested on them).
 */
function runsTypeScript() {
  const major = Number(process.versions.node.split(".")[0]);
  const strips =
    process.features?.typescript === "strip" || process.features?.typescript === "transform";
  return major >= 24 && strips;
}

/** The pinned Node 24 binary, wherever npm put the `node` package; null when not installed. */
function pinnedNode() {
  try {
    const pkg = createRequire(import.meta.url).resolve("node/package.json");
    const bin = join(dirname(pkg), "bin", "node");
    return existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}

const args = process.argv.slice(2);

/**
 * npm runs a command through a shell of its own and, sent SIGTERM, passes it to that shell
 * only: the shell dies without passing it on, and maitred, reparented, would go on serving
 * after the command the user started has gone (`kill <npx's PID>`, a supervisor stopping
 * `npm start`). Started by npm (it sets npm_command), maitred checks its parent each second
 * and, once the parent is gone, stops as SIGTERM would stop it (serve drains first).
 * Started any other way (a shell, systemd, a container), it is left alone: a shell that exits
 * may well mean to leave a server behind it.
 */
function watchParent(stop) {
  if (process.env.npm_command === undefined) return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    stop();
  }, 1000);
  timer.unref();
}

if (INSTALLED || runsTypeScript()) {
  watchParent(() => process.kill(process.pid, "SIGTERM"));
  await import(MAIN);
} else {
  const node = pinnedNode();
  if (node === null) {
    process.stderr.write(
      `maitred needs Node 24 (this is Node ${process.versions.node}): run \`npm install\` in ${ROOT} to get the pinned one, or install Node 24.\n`,
    );
    process.exit(1);
  }
  const child = spawn(node, [MAIN, ...args], {
    stdio: "inherit",
    detached: true,
  });
  watchParent(() => child.kill("SIGTERM"));
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
    process.on(signal, () => child.kill(signal));
  }
  child.on("error", (err) => {
    process.stderr.write(`maitred: could not start ${node}: ${err.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal !== null) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
