import assert from "node:assert/strict";
import { test } from "node:test";
import { createResponseHomes, MAX_RESPONSE_HOMES } from "../../src/proxy/response-homes.ts";

test("response homes stay bounded by MAX_RESPONSE_HOMES after three times as many responses, the oldest forgotten first", () => {
  const homes = createResponseHomes();
  const responses = 3 * MAX_RESPONSE_HOMES;
  let most = 0;
  for (let i = 0; i < responses; i++) {
    homes.record(`resp_${i}`, { backendId: `b${i % 2}`, programKey: `p${i}`, programId: `p${i}` });
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
    homes.record(id, { backendId: id, programKey: null, programId: null });
  homes.record("a", { backendId: "a2", programKey: null, programId: null });
  homes.record("d", { backendId: "d", programKey: null, programId: null });
  assert.equal(homes.get("b"), undefined, "b was the oldest");
  assert.equal(homes.get("a")?.backendId, "a2");
  assert.equal(homes.size, 3);
});
