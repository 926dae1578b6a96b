import assert from "node:assert/strict";
import { request } from "node:http";
import { test } from "node:test";
import { parsePrometheusText, sumOf } from "../../src/backends/prometheus-text.ts";
import type { TimerHandle } from "../../src/runtime/clock.ts";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

/**
 * `--shadow` over HTTP: requests are routed as the default router routes them, never held or
 * refused by the tr core beside it, while /shadow, /metrics and /health show what tr would
 * have done.
 */

const TOKEN = "s3cret-admin-token-0123";
/** Far more than the fake backend's 8 blocks × 16 tokens: tr has room for none of it. */
const LONG = "The tool printed a long listing of the repository. ".repeat(40);

interface ShadowBody {
  mode: string;
  routed_as: string;
  errors: number;
  decisions: Record<string, number>;
  first_traffic_change: {
    kind: string;
    program_id: string | null;
    actual_backend: string | null;
    changes_traffic: boolean;
  } | null;
  held_requests: {
    now: number;
    held: number;
    ended: Record<string, number>;
    held_for: { count: number; max_s: number | null };
  };
  seats: { total: number; same: number; elsewhere: number };
  engines: { ticks: number };
  recent_decisions: Array<{ kind: string; program_id: string | null }>;
}

function chat(router: TestRouter, program: string, stream: boolean, headers = {}) {
  return fetch(`${router.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({
      model: "m",
      stream,
      messages: [{ role: "user", content: LONG }],
      program_id: program,
    }),
  });
}

/** The first frame of the live page's stream, then the connection is destroyed. */
function firstFrame(router: TestRouter): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const req = request(`${router.url}/ui/events`, { agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (piece: string) => {
        text += piece;
        if (!text.includes("\n\n")) return;
        res.destroy();
        resolve(JSON.parse(text.slice(text.indexOf("data: ") + 6, text.indexOf("\n\n"))));
      });
    });
    req.on("error", reject);
    req.end();
  });
}

/** A streamed request whose answer the fake backend holds open until it is released. */
function openStream(router: TestRouter, program: string) {
  const req = request(`${router.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
  });
  req.on("error", () => {});
  const response = new Promise<import("node:http").IncomingMessage>((resolve) =>
    req.on("response", resolve),
  );
  req.end(
    JSON.stringify({
      model: "m",
      stream: true,
      messages: [{ role: "user", content: LONG }],
      program_id: program,
    }),
  );
  return response;
}

test("--router tr --shadow routes as default: what tr would hold goes through, and /shadow and /metrics show the hold", async () => {
  const backend = await startFakeBackend({ numGpuBlocks: 8, holdAfter: 1 });
  const router = await startTestRouter({ backends: backend.url, router: "tr", shadow: true });
  try {
    const health = (await (await fetch(`${router.url}/health`)).json()) as {
      mode: string;
      shadow: boolean;
    };
    assert.equal(health.mode, "default", "the router itself routes as default");
    assert.equal(health.shadow, true);

    // Program A runs alone: tr seats it on the idle backend, as default does.
    const a = openStream(router, "prog-a");
    assert.equal((await a).statusCode, 200);
    await backend.held();
    // Program B comes while A is in flight: tr has no room and would hold it; it goes through.
    const b = await chat(router, "prog-b", false, { "x-fake-no-hold": "1" });
    assert.equal(b.status, 200, await b.clone().text());
    assert.equal(b.headers.get("x-maitred-paused-ms"), "0", "never held");
    await b.text();
    await router.waitForEvent((e) => e.kind === "request_finished");

    const snap = router.loop.scheduler.snapshot();
    assert.equal(snap.mode, "default");
    assert.equal(snap.counters.pauses, 0);
    assert.equal(snap.queueLength, 0, "the router holds nothing");

    const res = await fetch(`${router.url}/shadow`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as ShadowBody;
    assert.equal(body.mode, "tr");
    assert.equal(body.routed_as, "default");
    assert.equal(body.errors, 0);
    assert.equal(body.decisions.hold, 1, JSON.stringify(body.recent_decisions));
    assert.equal(body.decisions.idle_resume, 1, "A: held for no room, seated on the idle backend");
    assert.equal(body.first_traffic_change?.kind, "hold");
    assert.equal(body.first_traffic_change?.program_id, "prog-b");
    assert.equal(
      body.first_traffic_change?.actual_backend,
      backend.url,
      "where the router sent what tr would have held",
    );
    // B really ended while tr would still hold it: its hold ended with the request.
    assert.equal(body.held_requests.held, 1);
    assert.equal(body.held_requests.ended.request_ended, 1);
    assert.equal(body.held_requests.now, 0);
    assert.equal(body.held_requests.held_for.count, 1);
    assert.ok(body.seats.total >= 1 && body.seats.same === body.seats.total, "A's seat agreed");
    assert.ok(body.engines.ticks >= 1, "the start-up tick's samples were seen");

    const metrics = parsePrometheusText(await (await fetch(`${router.url}/metrics`)).text());
    const kind = (k: string) =>
      metrics.get("maitred_shadow_decisions_total")?.find((m) => m.labels.kind === k)?.value;
    assert.equal(kind("hold"), 1);
    assert.equal(kind("preempt"), 0, "every kind is listed from the first scrape");
    assert.equal(sumOf(metrics, "maitred_shadow_held_requests"), 0);
    assert.equal(sumOf(metrics, "maitred_shadow_traffic_changes_total"), 1);
    assert.equal(sumOf(metrics, "maitred_shadow_errors_total"), 0);
    const ended = metrics
      .get("maitred_shadow_hold_seconds_count")
      ?.find((m) => m.labels.end === "request_ended");
    assert.equal(ended?.value, 1);
    for (const [name, samples] of metrics) {
      for (const m of samples)
        assert.ok(!Object.values(m.labels).some((v) => v.startsWith("prog-")), name);
    }

    // The live page's "shadow (tr)" panel.
    assert.match(await (await fetch(`${router.url}/ui`)).text(), /id="shadow-section"/);
    const frame = (await firstFrame(router)) as {
      shadow: {
        decisions: Record<string, number>;
        held: number;
        firstChangeAt: number | null;
        recent: Array<{ kind: string; program_id: string }>;
      } | null;
    };
    assert.equal(frame.shadow?.decisions.hold, 1);
    assert.equal(frame.shadow?.held, 1);
    assert.ok(frame.shadow?.firstChangeAt !== null);
    assert.ok(frame.shadow?.recent.some((d) => d.kind === "hold" && d.program_id === "prog-b"));
  } finally {
    backend.release();
    await router.close();
    await backend.close();
  }
});

test("without --shadow, /shadow is a 404 in the OpenAI envelope and no shadow series exist", async () => {
  const backend = await startFakeBackend();
  const router = await startTestRouter({ backends: backend.url });
  try {
    const res = await fetch(`${router.url}/shadow`);
    assert.equal(res.status, 404);
    const body = (await res.json()) as { error: { type: string; message: string } };
    assert.equal(body.error.type, "NotFoundError");
    assert.match(body.error.message, /--shadow/);
    const health = (await (await fetch(`${router.url}/health`)).json()) as { shadow: boolean };
    assert.equal(health.shadow, false);
    const text = await (await fetch(`${router.url}/metrics`)).text();
    assert.ok(!text.includes("maitred_shadow_"), "a router without a shadow exports none");
    assert.equal((await firstFrame(router)).shadow, null, "no shadow panel");
  } finally {
    await router.close();
    await backend.close();
  }
});

test("/shadow is an admin route: with --admin-token it needs the token", async () => {
  const backend = await startFakeBackend();
  const router = await startTestRouter({
    backends: backend.url,
    router: "default",
    shadow: true,
    "admin-token": TOKEN,
  });
  try {
    assert.equal((await fetch(`${router.url}/shadow`)).status, 401);
    const ok = await fetch(`${router.url}/shadow`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(ok.status, 200, "--router default --shadow watches tr too");
    assert.equal(((await ok.json()) as ShadowBody).mode, "tr");
  } finally {
    await router.close();
    await backend.close();
  }
});

// The whole loop on simulated vLLM engines with a tiny KV cache, on one virtual clock (as in
// tr-run.test.ts): agents take turns, the router routes as default, the shadow records.
const PROGRAMS = 8;
const TURNS = 3;
const TOOL_MS = 3000;
const STUCK_AFTER_MS = 3_600_000;
const SYSTEM = "You are a careful software agent working on a repository. ".repeat(6);
const SIM_YAML = "sim:\n  num-gpu-blocks: 65\n  block-size: 16\n  max-model-len: 1024\n";

async function agent(router: TestRouter, id: string): Promise<number> {
  const messages: Array<{ role: string; content: string }> = [{ role: "system", content: SYSTEM }];
  let maxPausedMs = 0;
  for (let turn = 0; turn < TURNS; turn++) {
    messages.push({
      role: "user",
      content: `Turn ${turn}: the tool printed ${"output line ".repeat(25)}`,
    });
    const last = turn === TURNS - 1;
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(last ? { "x-program-final": "true" } : {}),
      },
      body: JSON.stringify({
        model: "meta-llama/Llama-3.1-8B-Instruct",
        messages,
        max_tokens: 12,
        program_id: id,
      }),
    });
    assert.equal(res.status, 200, `${id} turn ${turn}: ${res.status}`);
    maxPausedMs = Math.max(maxPausedMs, Number(res.headers.get("x-maitred-paused-ms")));
    messages.push({ role: "assistant", content: (await res.text()).slice(0, 200) });
    if (!last) await new Promise<void>((resolve) => router.clock.setTimeout(resolve, TOOL_MS));
  }
  return maxPausedMs;
}

test("on engines too small for the load, the shadow would have held requests while the router held none", async () => {
  const router = await startTestRouter(
    { backends: "sim:2", router: "tr", shadow: true },
    { yaml: SIM_YAML, virtualTime: true },
  );
  let stuck: TimerHandle | undefined;
  try {
    const hang = new Promise<never>((_, reject) => {
      stuck = router.clock.setTimeout(() => reject(new Error("stuck")), STUCK_AFTER_MS);
    });
    const waits = await Promise.race([
      Promise.all(Array.from({ length: PROGRAMS }, (_, i) => agent(router, `agent-${i}`))),
      hang,
    ]);
    assert.deepEqual(
      waits,
      waits.map(() => 0),
      "no request was ever held",
    );
    assert.equal(router.loop.scheduler.snapshot().counters.pauses, 0);

    const body = (await (await fetch(`${router.url}/shadow`)).json()) as ShadowBody;
    assert.equal(body.errors, 0);
    assert.ok(body.decisions.hold > 0, `tr would have held: ${JSON.stringify(body.decisions)}`);
    assert.ok(body.decisions.seat > 0);
    assert.ok(body.first_traffic_change !== null);
    assert.ok(body.engines.ticks > 0);
    const ends = body.held_requests.ended;
    assert.equal(
      ends.seated + ends.rejected + ends.request_ended + body.held_requests.now,
      body.held_requests.held,
      "each hold ended once, or still holds",
    );
  } finally {
    stuck?.cancel();
    await router.close();
  }
});
