import assert from "node:assert/strict";
import { test } from "node:test";
import { startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter } from "./helpers/test-router.ts";

/** Sub-agent trees over HTTP: the tree in /programs, release of a tree, refused parents. */

const YAML = `
priority:
  enabled: false
  tenants:
    alpha: { max_class: default, api_keys: [key-alpha] }
    beta: { max_class: default, api_keys: [key-beta] }
`;
const ALPHA = { authorization: "Bearer key-alpha" };
const BETA = { authorization: "Bearer key-beta" };
// Every answer ends in a tool call: programs mid-run.
const STEP = { "x-fake-tool-call": "1" };

async function ask(url: string, headers: Record<string, string>, body: Record<string, unknown>) {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...STEP, ...headers },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], ...body }),
  });
  const text = await res.text();
  return { status: res.status, text };
}

// biome-ignore lint/suspicious/noExplicitAny: the JSON views, read field by field
const programs = async (url: string): Promise<Record<string, any>> =>
  (await fetch(`${url}/programs`)).json() as Promise<Record<string, unknown>>;

test("a tree shows in /programs and ends with its root", async () => {
  const backend = await startFakeBackend({});
  const router = await startTestRouter({ backends: backend.url }, { yaml: YAML });
  try {
    assert.equal((await ask(router.url, ALPHA, { program_id: "lead" })).status, 200);
    const child = await ask(
      router.url,
      { ...ALPHA, "x-parent-program-id": "lead" },
      {
        program_id: "worker",
      },
    );
    assert.equal(child.status, 200);
    const grandchild = await ask(router.url, ALPHA, {
      program_id: "helper",
      parent_program_id: "worker",
    });
    assert.equal(grandchild.status, 200, "the body field names a parent too");
    const all = await programs(router.url);
    const lead = all["alpha\u001flead"];
    assert.deepEqual(lead.children, ["worker"]);
    assert.equal(all["alpha\u001fworker"].parent_program_id, "lead");
    assert.deepEqual(all["alpha\u001fworker"].children, ["helper"]);
    assert.equal(all["alpha\u001fhelper"].backend, lead.backend, "beside its ancestors' prefix");
    const released = await fetch(`${router.url}/programs/release`, {
      method: "POST",
      headers: { "content-type": "application/json", ...ALPHA },
      body: JSON.stringify({ program_id: "lead" }),
    });
    assert.equal(released.status, 200);
    assert.deepEqual(Object.keys(await programs(router.url)), [], "the whole tree ended");
  } finally {
    await router.close();
    await backend.close();
  }
});

test("another caller's parent, a cycle, or a second parent is a 400 that changes nothing", async () => {
  const backend = await startFakeBackend({});
  const router = await startTestRouter({ backends: backend.url }, { yaml: YAML });
  try {
    assert.equal((await ask(router.url, ALPHA, { program_id: "lead" })).status, 200);
    assert.equal(
      (await ask(router.url, ALPHA, { program_id: "w", parent_program_id: "lead" })).status,
      200,
    );
    assert.equal((await ask(router.url, ALPHA, { program_id: "other" })).status, 200);
    const before = await programs(router.url);
    const sent = backend.received.length;
    const cases: [Record<string, string>, Record<string, unknown>, RegExp][] = [
      [BETA, { program_id: "spy", parent_program_id: "lead" }, /no running program of this caller/],
      [ALPHA, { program_id: "lead", parent_program_id: "w" }, /cycle/],
      [ALPHA, { program_id: "w", parent_program_id: "other" }, /another parent/],
      [ALPHA, { program_id: "x", parent_program_id: "x" }, /its own parent/],
    ];
    for (const [headers, body, why] of cases) {
      const r = await ask(router.url, headers, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      const { error } = JSON.parse(r.text);
      assert.equal(error.param, "parent_program_id");
      assert.equal(error.type, "BadRequestError");
      assert.match(error.message, why);
    }
    assert.deepEqual(await programs(router.url), before, "no program created or changed");
    assert.equal(backend.received.length, sent, "nothing reached the backend");
  } finally {
    await router.close();
    await backend.close();
  }
});
