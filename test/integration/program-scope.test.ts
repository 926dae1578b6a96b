import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type FakeBackend, startFakeBackend } from "./helpers/fake-backend.ts";
import { startTestRouter, type TestRouter } from "./helpers/test-router.ts";

describe("program-scope", () => {
  const ADMIN = "admin-token-0123456789";
  // Tenants without priorities: the ids are scoped all the same.
  const TENANTS = `
priority:
  enabled: false
  tenants:
    alpha: { max_class: default, api_keys: [sk-alpha] }
    beta: { max_class: default, api_keys: [sk-beta] }
`;

  let backend: FakeBackend;
  let router: TestRouter;

  before(async () => {
    backend = await startFakeBackend();
    router = await startTestRouter(
      { backends: backend.url, "admin-token": ADMIN },
      { yaml: TENANTS },
    );
  });
  after(async () => {
    await router?.close();
    await backend?.close();
  });

  function chat(key: string | null, body: Record<string, unknown>) {
    return fetch(`${router.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(key === null ? {} : { authorization: `Bearer ${key}` }),
      },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], ...body }),
    });
  }

  async function ok(res: Response): Promise<void> {
    assert.equal(res.status, 200, await res.text());
  }

  function release(key: string | null, body: Record<string, unknown>) {
    return fetch(`${router.url}/programs/release`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(key === null ? {} : { authorization: `Bearer ${key}` }),
      },
      body: JSON.stringify(body),
    });
  }

  type Listing = Record<string, { program_id: string; tenant: string | null; step_count: number }>;

  async function programs(): Promise<Listing> {
    const res = await fetch(`${router.url}/programs`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    assert.equal(res.status, 200);
    return (await res.json()) as Listing;
  }

  /** (tenant, id) of each program the router holds, sorted. */
  async function owners(): Promise<string[]> {
    return Object.values(await programs())
      .map((p) => `${p.tenant ?? "-"}/${p.program_id}`)
      .sort();
  }

  describe("program ids are scoped by caller", () => {
    test("the same id from two tenants and an anonymous caller is three programs", async () => {
      await ok(await chat("sk-alpha", { program_id: "shared-1" }));
      await ok(await chat("sk-alpha", { program_id: "shared-1" }));
      await ok(await chat("sk-beta", { program_id: "shared-1" }));
      await ok(await chat(null, { program_id: "shared-1" }));
      // An unmapped key names no tenant: it is the anonymous caller.
      await ok(await chat("sk-unknown", { program_id: "shared-1" }));
      assert.deepEqual(await owners(), ["-/shared-1", "alpha/shared-1", "beta/shared-1"]);
      const listing = Object.values(await programs());
      const steps = (t: string | null) => listing.find((p) => p.tenant === t)?.step_count;
      assert.equal(steps("alpha"), 2);
      assert.equal(steps("beta"), 1);
      assert.equal(steps(null), 2);
      const one = await fetch(`${router.url}/programs/shared-1?tenant=beta`, {
        headers: { authorization: `Bearer ${ADMIN}` },
      });
      assert.equal(one.status, 200);
      assert.equal(((await one.json()) as { tenant: string }).tenant, "beta");
    });

    test("a release and program_final act on the caller's own program only", async () => {
      await ok(await chat("sk-alpha", { program_id: "mine" }));
      await ok(await chat("sk-beta", { program_id: "mine" }));
      await ok(await chat(null, { program_id: "mine" }));
      // beta ends its own "mine" on its last request; alpha's and the anonymous one stay.
      await ok(await chat("sk-beta", { program_id: "mine", program_final: true }));
      assert.deepEqual(
        (await owners()).filter((o) => o.endsWith("/mine")),
        ["-/mine", "alpha/mine"],
      );
      // An anonymous release finds only the anonymous program.
      const anon = await release(null, { program_id: "mine" });
      assert.deepEqual(await anon.json(), { program_id: "mine", released: true });
      assert.deepEqual(
        (await owners()).filter((o) => o.endsWith("/mine")),
        ["alpha/mine"],
      );
      // beta has nothing called "mine" any more: releasing it is a no-op, not alpha's loss.
      const beta = await release("sk-beta", { program_id: "mine" });
      assert.deepEqual(await beta.json(), { program_id: "mine", tenant: "beta", released: false });
      assert.deepEqual(
        (await owners()).filter((o) => o.endsWith("/mine")),
        ["alpha/mine"],
      );
    });

    test("naming another tenant's program in a release takes the admin token", async () => {
      await ok(await chat("sk-alpha", { program_id: "guarded" }));
      const denied = await release("sk-beta", { program_id: "guarded", tenant: "alpha" });
      assert.equal(denied.status, 401);
      assert.equal(
        ((await denied.json()) as { error: { code: string } }).error.code,
        "unauthorized",
      );
      assert.ok((await owners()).includes("alpha/guarded"), "the program is untouched");
      const admin = await release(ADMIN, { program_id: "guarded", tenant: "alpha" });
      assert.deepEqual(await admin.json(), {
        program_id: "guarded",
        tenant: "alpha",
        released: true,
      });
      assert.ok(!(await owners()).includes("alpha/guarded"));
    });

    test("an id holding a control character is refused before it reaches a backend", async () => {
      const before = backend.received.length;
      for (const id of ["alpha\u001fx", "tab\there", "nul\u0000"]) {
        const res = await chat(null, { program_id: id });
        assert.equal(res.status, 400, id);
        const body = (await res.json()) as { error: { code: string; param: string } };
        assert.equal(body.error.code, "program_id_invalid");
        assert.equal(body.error.param, "program_id");
      }
      const rel = await release(null, { program_id: "alpha\u001fguarded" });
      assert.equal(rel.status, 400);
      assert.equal(backend.received.length, before);
    });
  });

  test("a trusted x-tenant-id scopes ids like a key does, and a parent id is the caller's too", async () => {
    const fake = await startFakeBackend();
    const trusted = await startTestRouter(
      { backends: fake.url },
      {
        yaml: `
priority:
  enabled: false
  trust_tenant_header: true
  tenants:
    gamma: { max_class: default }
`,
      },
    );
    try {
      const send = (headers: Record<string, string>, body: Record<string, unknown>) =>
        fetch(`${trusted.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }], ...body }),
        });
      // The parent must be the caller's own running program.
      await ok(await send({ "x-tenant-id": "gamma" }, { program_id: "mom" }));
      await ok(
        await send({ "x-tenant-id": "gamma" }, { program_id: "kid", parent_program_id: "mom" }),
      );
      await ok(await send({}, { program_id: "kid" }));
      // A tenant the config does not name is no tenant: anonymous.
      await ok(await send({ "x-tenant-id": "nobody" }, { program_id: "kid" }));
      const keys = trusted.loop.scheduler
        .snapshot()
        .programs.map((p) => p.id)
        .sort();
      assert.deepEqual(keys, ["gamma\u001fkid", "gamma\u001fmom", "kid"]);
      assert.equal(
        trusted.loop.scheduler.program("gamma\u001fkid")?.parentProgramId,
        "gamma\u001fmom",
      );
    } finally {
      await trusted.close();
      await fake.close();
    }
  });
});
