import assert from "node:assert/strict";
import { test } from "node:test";
import {
  createResponseHomes,
  MAX_RESPONSE_HOMES,
  type ResponseHome,
  reachable,
} from "../../src/proxy/response-homes.ts";

test("response homes stay bounded by MAX_RESPONSE_HOMES after three times as many responses, the oldest forgotten first", () => {
  const homes = createResponseHomes();
  const responses = 3 * MAX_RESPONSE_HOMES;
  let most = 0;
  for (let i = 0; i < responses; i++) {
    homes.record(`resp_${i}`, {
      backendId: `b${i % 2}`,
      programKey: `p${i}`,
      programId: `p${i}`,
      owner: null,
    });
    most = Math.max(most, homes.size);
  }
  assert.equal(most, MAX_RESPONSE_HOMES, `got at most ${most}, want ${MAX_RESPONSE_HOMES}`);
  assert.equal(homes.get(`resp_${responses - 1}`)?.backendId, `b${(responses - 1) % 2}`);
  assert.ok(homes.get(`resp_${responses - MAX_RESPONSE_HOMES}`) !== undefined, "oldest kept");
  assert.equal(homes.get(`resp_${responses - MAX_RESPONSE_HOMES - 1}`), undefined, "older: gone");
});

test("a response recorded again becomes the newest: the chain a client continues is the last forgotten", () => {
  const homes = createResponseHomes(3);
  for (const id of ["a", "b", "c"])
    homes.record(id, { backendId: id, programKey: null, programId: null, owner: null });
  homes.record("a", { backendId: "a2", programKey: null, programId: null, owner: null });
  homes.record("d", { backendId: "d", programKey: null, programId: null, owner: null });
  assert.equal(homes.get("b"), undefined, "b was the oldest");
  assert.equal(homes.get("a")?.backendId, "a2");
  assert.equal(homes.size, 3);
});

const home = (owner: string | null): ResponseHome => ({
  backendId: "b0",
  programKey: null,
  programId: null,
  owner,
});

test("a response made by a tenant is reachable by that tenant only: another tenant and an anonymous caller are refused", () => {
  const alphas = home("alpha");
  assert.equal(reachable(alphas, "alpha"), true, "its own tenant, whichever key it used");
  assert.equal(reachable(alphas, "beta"), false, "another tenant must not read or continue it");
  assert.equal(reachable(alphas, null), false, "an anonymous caller must not either");
});

test("a response made anonymously stays reachable by every caller, tenants included, as before tenants", () => {
  const anon = home(null);
  for (const caller of [null, "alpha", "beta"])
    assert.equal(reachable(anon, caller), true, `got refused for caller ${caller}, want reached`);
});

test("an id maitred does not remember is reachable by every caller: it goes to the backends as it always did", () => {
  for (const caller of [null, "alpha"])
    assert.equal(reachable(undefined, caller), true, `caller ${caller}`);
});

test("a tenant's response forgotten past the bound is an unknown id again, and its record of owner goes with its home", () => {
  const homes = createResponseHomes(2);
  homes.record("resp_a", home("alpha"));
  assert.equal(reachable(homes.get("resp_a"), "beta"), false, "while remembered: refused");
  homes.record("resp_b", home("beta"));
  homes.record("resp_c", home("beta"));
  assert.equal(homes.get("resp_a"), undefined, "the oldest is forgotten");
  assert.equal(homes.size, 2, "the owner adds no entry: the bound holds");
  assert.equal(reachable(homes.get("resp_a"), "beta"), true, "then: case 1, the backends answer");
});
