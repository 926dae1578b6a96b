/**
 * `npm run image -- smoke`: the image run as a user runs it, checked end to end: it answers
 * /health, README's curl and podman's healthcheck, and `podman stop` drains it (a stream in
 * flight finishes, a new program gets 503, the container exits 0). Each check prints one
 * `ok`/`FAIL` line; any failure makes the whole an `ImageError`.
 */

import { type Clock, wallClock } from "../../runtime/clock.ts";
import { freePort } from "../free-port.ts";
import type { SmokeOptions } from "./image-args.ts";
import { ImageError } from "./image-error.ts";
import { IMAGE } from "./image-refs.ts";
import { megabytes, type Podman, podmanCli } from "./podman.ts";

/** Above the image's --drain (10 s) + --shutdown-grace (30 s), so podman never kills a drain. */
const STOP_TIMEOUT_S = 50;
/** How long the container may take to answer /health, and to turn it 503 once stopped. */
const UP_MS = 60_000;
const DRAINING_MS = 5000;
/** The request README's quick start sends; the simulated backends serve this model. */
export const README_BODY = {
  model: "meta-llama/Llama-3.1-8B-Instruct",
  program_id: "agent-1",
  messages: [{ role: "user", content: "list the files" }],
  max_tokens: 32,
};
/** What the container logs when podman stop drains it. */
const DRAIN_LINES = ["SIGTERM received, draining", "maitred stopped"];

/**
 * The wall clock with its timers kept referenced: between two polls of a container nothing
 * else of this process may be pending, and the process must not end there.
 */
const keptClock: Clock = {
  now: wallClock.now,
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  },
};

/** Polls `url` until its status is `want`, up to `ms`; the seconds it took, or null. */
export async function waitStatus(
  url: string,
  want: number,
  ms: number,
  clock: Clock = keptClock,
): Promise<number | null> {
  const started = clock.now();
  while (clock.now() - started < ms) {
    const status = await fetch(url).then(
      (r) => r.status,
      () => 0,
    );
    if (status === want) return (clock.now() - started) / 1000;
    await new Promise<void>((resolve) => clock.setTimeout(resolve, 100));
  }
  return null;
}

function chat(url: string, body: object): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

export interface SmokeDeps {
  podman: Podman;
  log: (line: string) => void;
  clock: Clock;
}

export async function smoke(o: SmokeOptions, deps: Partial<SmokeDeps> = {}): Promise<void> {
  const { podman = podmanCli, log = console.log, clock = keptClock } = deps;
  const image = o.image ?? `${IMAGE}:latest`;
  if (!podman.exists(image)) throw new ImageError(`no image ${image}: npm run image -- build`);
  const port = o.port === undefined ? await freePort() : Number(o.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ImageError(`--port must be a port number, got ${o.port}`);
  }
  const name = `maitred-smoke-${process.pid}`;
  const url = `http://127.0.0.1:${port}`;
  const failures: string[] = [];
  const check = (ok: boolean, what: string) => {
    log(`${ok ? "ok  " : "FAIL"} ${what}`);
    if (!ok) failures.push(what);
  };
  const seconds = (since: number) => `${((clock.now() - since) / 1000).toFixed(1)} s`;
  const started = clock.now();
  podman.start(name, image, port);
  try {
    const up = await waitStatus(`${url}/health`, 200, UP_MS, clock);
    if (up === null) {
      // podman's own notices (time=… lines) come with the log: left out.
      const said = podman
        .logs(name, 3)
        .split("\n")
        .filter((l) => !l.startsWith("time="));
      throw new ImageError(`${image} never answered /health; its log ends: ${said.join(" ")}`);
    }
    check(true, `/health 200 after ${up.toFixed(1)} s (${image} on ${url})`);

    const res = await chat(url, README_BODY);
    const answer = (await res.json()) as { choices?: { message?: { content?: string } }[] };
    const text = answer.choices?.[0]?.message?.content ?? "";
    check(
      res.status === 200 && text.length > 0,
      `README curl: ${res.status}, "${text.slice(0, 40)}…"`,
    );

    const hc = podman.healthcheck(name);
    check(hc === 0, `podman healthcheck run: exit ${hc}`);

    // A long stream in flight when podman stop sends SIGTERM: the drain must let it finish.
    const stream = await chat(url, {
      ...README_BODY,
      program_id: "smoke-drain",
      stream: true,
      max_tokens: 600,
      ignore_eos: true,
    });
    check(stream.status === 200, `a 600-token stream started: ${stream.status}`);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    let streamed = (await reader.read()).value ?? "";
    const stopStarted = clock.now();
    const stopping = podman.stop(name, STOP_TIMEOUT_S);
    const draining = await waitStatus(`${url}/health`, 503, DRAINING_MS, clock);
    check(draining !== null, `/health 503 ${draining?.toFixed(1)} s after podman stop`);
    const late = await chat(url, { ...README_BODY, program_id: "smoke-late" });
    const lateBody = (await late.json().catch(() => ({}))) as { error?: { code?: string } };
    check(
      late.status === 503,
      `a new program while draining: ${late.status} ${lateBody.error?.code}`,
    );
    for (let r = await reader.read(); !r.done; r = await reader.read()) streamed += r.value;
    const chunks = streamed.split("\n").filter((l) => l.startsWith("data: {")).length;
    check(streamed.includes("data: [DONE]"), `the stream in flight finished: ${chunks} chunks`);
    const stopCode = await stopping;
    const exit = podman.exitCode(name);
    check(stopCode === 0 && exit === "0", `podman stop took ${seconds(stopStarted)}; exit ${exit}`);
    const logs = podman.logs(name);
    const said = DRAIN_LINES.filter((s) => !logs.includes(s));
    check(
      said.length === 0,
      `log says it drained and stopped${said.length ? `; missing: ${said}` : ""}`,
    );
  } finally {
    podman.remove(name);
  }
  log(`${image}: ${megabytes(podman.size(image))}; smoke took ${seconds(started)}`);
  if (failures.length > 0) throw new ImageError(`smoke: ${failures.length} check(s) failed`);
}
