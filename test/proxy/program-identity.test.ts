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

test("the agent CLIs' own ids name their programs with no change to them", () => {
  const userId = JSON.stringify({ device_id: "dev", account_uuid: "", session_id: "cc-sess" });
  const homes: Record<string, string> = { resp_1: "chain-prog" };
  const lookup = (id: string) => homes[id] ?? null;
  const cases: Array<[Record<string, unknown>, Record<string, string>, string | null]> = [
    // Codex: its session-id header, and prompt_cache_key (= the same session id) in the body.
    [{}, { "session-id": "codex-sess" }, "codex-sess"],
    [{ prompt_cache_key: "pck" }, {}, "pck"],
    // Claude Code's metadata.user_id, as a JSON string and in the older flat form.
    [{ metadata: { user_id: userId } }, {}, "cc-sess"],
    [{ metadata: { user_id: "user_ab12_account_x_session_9f3c-11" } }, {}, "9f3c-11"],
    [{ metadata: { user_id: "{not json" } }, {}, null],
    // A Responses chain: the program of the response it continues, when maitred relayed it.
    [{ previous_response_id: "resp_1" }, {}, "chain-prog"],
    [{ previous_response_id: "resp_unknown" }, {}, null],
    // The header wins over the body's weaker sources, in the default order.
    [{ prompt_cache_key: "pck", previous_response_id: "resp_1" }, { "session-id": "s" }, "s"],
    [{ prompt_cache_key: "pck", previous_response_id: "resp_1" }, {}, "chain-prog"],
  ];
  for (const [body, headers, want] of cases) {
    assert.equal(
      resolveProgramIdentity(body, headers, ORDER, lookup).programId,
      want,
      `got / want for ${JSON.stringify({ body, headers })}`,
    );
  }
});

test("a prompt_cache_key that is no valid id is a 400 naming it", () => {
  assert.throws(
    () => resolveProgramIdentity({ prompt_cache_key: { a: 1 } }, {}, ORDER),
    (err: MaitredError) => err.status === 400 && err.param === "prompt_cache_key",
  );
});
