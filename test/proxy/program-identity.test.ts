import assert from "node:assert/strict";
import { test } from "node:test";
import { IDENTITY_SOURCES } from "../../src/config/identity-sources.ts";
import type { MaitredError } from "../../src/errors.ts";
import { resolveProgramIdentity } from "../../src/proxy/program-identity.ts";

const ORDER = [...IDENTITY_SOURCES];

test("body program_id wins over every other source by default", () => {
  const body = {
    program_id: "body",
    extra_body: { program_id: "extra" },
    nvext: { agent_context: { trajectory_id: "nv" } },
  };
  const id = resolveProgramIdentity(body, { "x-program-id": "hdr", "x-session-id": "sess" }, ORDER);
  assert.equal(id.programId, "body");
});

test("each source is used when the earlier ones are absent", () => {
  const cases: Array<[Record<string, unknown>, Record<string, string>, string]> = [
    [{ extra_body: { program_id: "extra" } }, { "x-program-id": "hdr" }, "extra"],
    [{}, { "x-program-id": "hdr", "x-session-id": "sess" }, "hdr"],
    [{}, { "x-claude-code-session-id": "cc" }, "cc"],
    [{}, { "x-dynamo-session-id": "dyn" }, "dyn"],
    [{ nvext: { agent_context: { trajectory_id: "traj" } } }, {}, "traj"],
  ];
  for (const [body, headers, want] of cases) {
    assert.equal(
      resolveProgramIdentity(body, headers, ORDER).programId,
      want,
      JSON.stringify({ body, headers }),
    );
  }
});

test("the order is configurable: first match in the configured order wins", () => {
  const id = resolveProgramIdentity({ program_id: "body" }, { "x-program-id": "hdr" }, [
    "x-program-id",
    "program_id",
  ]);
  assert.equal(id.programId, "hdr");
  const none = resolveProgramIdentity({ program_id: "body" }, {}, ["nvext"]);
  assert.equal(none.programId, null, "a source left out of the order is ignored");
});

test("a request with no id is anonymous", () => {
  assert.equal(resolveProgramIdentity({ model: "m" }, {}, ORDER).programId, null);
});

test("maitred-only fields are removed from the body; an emptied extra_body goes too", () => {
  const body: Record<string, unknown> = {
    model: "m",
    program_id: "p",
    program_final: true,
    extra_body: { program_id: "p" },
    nvext: { agent_context: { trajectory_id: "t" } },
  };
  const id = resolveProgramIdentity(body, {}, ORDER);
  assert.equal(id.stripped, true);
  assert.deepEqual(body, { model: "m", nvext: { agent_context: { trajectory_id: "t" } } });
  const keep: Record<string, unknown> = { extra_body: { program_id: "p", top_k: 5 } };
  resolveProgramIdentity(keep, {}, ORDER);
  assert.deepEqual(keep, { extra_body: { top_k: 5 } }, "other extra_body fields stay");
});

test("final comes from the header, the body flag or Dynamo's trajectory_final", () => {
  assert.equal(resolveProgramIdentity({}, { "x-program-final": "true" }, ORDER).final, true);
  assert.equal(resolveProgramIdentity({ program_final: true }, {}, ORDER).final, true);
  assert.equal(
    resolveProgramIdentity({ nvext: { agent_context: { trajectory_final: true } } }, {}, ORDER)
      .final,
    true,
  );
  assert.equal(resolveProgramIdentity({}, { "x-program-final": "false" }, ORDER).final, false);
});

test("the parent id is recorded from x-parent-program-id", () => {
  assert.equal(
    resolveProgramIdentity({ program_id: "c" }, { "x-parent-program-id": "p" }, ORDER)
      .parentProgramId,
    "p",
  );
});

test("a program id of the wrong type is a 400 naming the field", () => {
  assert.throws(
    () => resolveProgramIdentity({ program_id: { x: 1 } }, {}, ORDER),
    (err: MaitredError) => err.status === 400 && err.param === "program_id",
  );
  assert.equal(
    resolveProgramIdentity({ program_id: 42 }, {}, ORDER).programId,
    "42",
    "numbers are accepted",
  );
});
