import assert from "node:assert/strict";
import { test } from "node:test";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

/** Budgets through HTTP on the manual clock: each kind at its edge, the header, bad input. */

const ask = async (url: string, program: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-program-id": program, ...headers },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true }),
  });
  return { res, text: await res.text() };
};

const program = async (url: string, id: string) => {
  const res = await fetch(`${url}/programs/${id}`);
  // biome-ignore lint/suspicious/noExplicitAny: the JSON view, read field by field
  const body: any = res.status === 200 ? await res.json() : null;
  return { status: res.status, body };
};

const exhausted = async (url: string, kind: string) => {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^maitred_program_budgets_exhausted_total\\{kind="${kind}"\\} (\\S+)$`, "m");
  return Number(m.exec(text)?.[1]);
};

// Every answer ends in a tool call: a program in the middle of its run.
const STEP = { "x-fake-tool-call": "1" };

test("a steps budget from the config: the step past it is 429 program_budget_exceeded, the program released", async () => {
  const backend = await startFakeBackend({});
  const router = await startTestRouter(
    { backends: backend.url },
    { yaml: "budgets:\n  default: { steps: 2 }\n" },
  );
  try {
    assert.equal((await ask(router.url, "agent", STEP)).res.status, 200);
    assert.equal((await ask(router.url, "agent", STEP)).res.status, 200);
    const seen = await program(router.url, "agent");
    assert.deepEqual(seen.body.budget, { steps: { limit: 2, used: 2, left: 0 } });
    const refused = await ask(router.url, "agent", STEP);
    assert.equal(refused.res.status, 429);
    assert.equal(refused.res.headers.get("x-should-retry"), "false");
    const { error } = JSON.parse(refused.text);
    assert.equal(error.code, "program_budget_exceeded");
    assert.equal(error.type, "RateLimitError");
    assert.equal(error.param, "budget.steps");
    assert.match(error.message, /steps budget \(2 steps\)/);
    assert.equal((await program(router.url, "agent")).status, 404, "released");
    assert.equal(backend.received.filter((r) => r.path === "/v1/chat/completions").length, 2);
    assert.equal(await exhausted(router.url, "steps"), 1);
    assert.equal(await exhausted(router.url, "tokens"), 0);
    // Carrying on under the same id gets no fresh budget.
    assert.equal((await ask(router.url, "agent", STEP)).res.status, 429);
    assert.equal(await exhausted(router.url, "steps"), 1, "one program ended, once");
  } finally {
    await router.close();
    await backend.close();
  }
});

test("a tokens budget by header counts prompt + completion of every request", async () => {
  // Each answer: 10 prompt + 5 completion tokens by the backend's usage.
  const backend = await startFakeBackend({ promptTokens: 10, tokens: 5 });
  const router = await startTestRouter({ backends: backend.url });
  try {
    const budget = { ...STEP, "x-maitred-budget": "tokens=30" };
    assert.equal((await ask(router.url, "p", budget)).res.status, 200);
    assert.deepEqual((await program(router.url, "p")).body.budget, {
      tokens: { limit: 30, used: 15, left: 15 },
    });
    assert.equal((await ask(router.url, "p", STEP)).res.status, 200, "15 of 30 used");
    const refused = await ask(router.url, "p", STEP);
    assert.equal(refused.res.status, 429, "30 of 30 used");
    assert.equal(JSON.parse(refused.text).error.param, "budget.tokens");
    assert.equal(await exhausted(router.url, "tokens"), 1);
  } finally {
    await router.close();
    await backend.close();
  }
});

test("a wall budget: a step a millisecond before it is served, one at it is refused", async () => {
  const backend = await startFakeBackend({});
  const router = await startTestRouter({ backends: backend.url });
  try {
    assert.equal(
      (await ask(router.url, "p", { ...STEP, "x-maitred-budget": "wall=60s" })).res.status,
      200,
    );
    router.clock.advance(59_999);
    assert.equal((await ask(router.url, "p", STEP)).res.status, 200);
    router.clock.advance(1);
    const refused = await ask(router.url, "p", STEP);
    assert.equal(refused.res.status, 429);
    assert.equal(JSON.parse(refused.text).error.param, "budget.wall");
  } finally {
    await router.close();
    await backend.close();
  }
});

test("a header only lowers the configured budget; leaving it out later keeps the lower one", async () => {
  const backend = await startFakeBackend({});
  const router = await startTestRouter(
    { backends: backend.url },
    { yaml: "budgets:\n  default: { steps: 3 }\n" },
  );
  try {
    const raise = { ...STEP, "x-maitred-budget": "steps=100" };
    assert.equal((await ask(router.url, "p", raise)).res.status, 200);
    assert.equal(
      (await program(router.url, "p")).body.budget.steps.limit,
      3,
      "100 did not raise 3",
    );
    assert.equal(
      (await ask(router.url, "p", { ...STEP, "x-maitred-budget": "steps=2" })).res.status,
      200,
    );
    assert.equal((await ask(router.url, "p", STEP)).res.status, 429, "2 it stays");
  } finally {
    await router.close();
    await backend.close();
  }
});

test("a malformed budget header is a 400 that changes nothing", async () => {
  const backend = await startFakeBackend({});
  const router = await startTestRouter({ backends: backend.url });
  try {
    for (const bad of ["steps=many", "turns=3", "steps=1, steps=2", "wall=0", "=5"]) {
      const r = await ask(router.url, "p", { "x-maitred-budget": bad });
      assert.equal(r.res.status, 400, bad);
      const { error } = JSON.parse(r.text);
      assert.equal(error.param, "x-maitred-budget");
      assert.equal(error.type, "BadRequestError");
    }
    assert.equal((await program(router.url, "p")).status, 404, "no program was created");
    assert.equal(backend.received.filter((r) => r.path === "/v1/chat/completions").length, 0);
    assert.equal((await ask(router.url, "p", STEP)).res.status, 200, "the id is still free");
  } finally {
    await router.close();
    await backend.close();
  }
});
