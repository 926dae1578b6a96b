import assert from "node:assert/strict";
import { test } from "node:test";
import { DEFAULT_PRIORITY, type RouterPriority } from "../../src/config/priority-section.ts";
import { MaitredError } from "../../src/errors.ts";
import { DIALECTS } from "../../src/proxy/dialects/all-dialects.ts";
import { prepareRequest } from "../../src/proxy/prepare-request.ts";
import { createClassResolver } from "../../src/proxy/request-class.ts";

const ORDER = ["program_id"] as const;

function resolver(over: Partial<RouterPriority> = {}) {
  return createClassResolver({ ...structuredClone(DEFAULT_PRIORITY), enabled: true, ...over });
}

const TENANTS: Partial<RouterPriority> = {
  tenants: { ops: "system", free: "bulk", chat: "interactive" },
  apiKeys: { "sk-free": "free", "sk-ops": "ops" },
};
/** The same tenants named by a header the operator chose to trust, and no keys. */
const BY_HEADER: Partial<RouterPriority> = {
  tenants: { ops: "system", free: "bulk", chat: "interactive" },
  trustTenantHeader: true,
};

function errorOf(fn: () => unknown): MaitredError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof MaitredError, `want MaitredError, got ${String(err)}`);
    return err;
  }
  assert.fail("want a MaitredError, got none");
}

test("no header and no body field gives the default class, unclamped", () => {
  const r = resolver().resolve({ model: "m" }, {});
  assert.deepEqual(r, { priorityClass: "default", clamped: false, stripped: false });
});

test("the x-priority header wins over the body field, and a string body field is still stripped", () => {
  const body: Record<string, unknown> = { model: "m", priority: "bulk" };
  const r = resolver().resolve(body, { "x-priority": "Interactive " });
  assert.equal(r.priorityClass, "interactive", "header, case and blanks ignored");
  assert.equal(r.stripped, true);
  assert.equal("priority" in body, false, "maitred's string field never reaches the backend");
});

test("a string body priority is the class when there is no header, and is removed", () => {
  const body: Record<string, unknown> = { priority: "bulk" };
  const r = resolver().resolve(body, {});
  assert.equal(r.priorityClass, "bulk");
  assert.deepEqual(body, {});
});

test("an integer body priority is vLLM's field: left in the body and not read as a class", () => {
  const body: Record<string, unknown> = { priority: -5 };
  const r = resolver().resolve(body, {});
  assert.equal(r.priorityClass, "default");
  assert.equal(r.stripped, false);
  assert.deepEqual(body, { priority: -5 });
});

test("an unknown class is a 400 naming the header or the body field it came from", () => {
  const fromHeader = errorOf(() => resolver().resolve({}, { "x-priority": "urgent" }));
  assert.equal(fromHeader.status, 400);
  assert.equal(fromHeader.param, "x-priority");
  assert.match(fromHeader.message, /urgent/);
  const fromBody = errorOf(() => resolver().resolve({ priority: "vip" }, {}));
  assert.equal(fromBody.status, 400);
  assert.equal(fromBody.param, "priority");
});

test("a blank header falls back to the body field", () => {
  const r = resolver().resolve({ priority: "bulk" }, { "x-priority": "  " });
  assert.equal(r.priorityClass, "bulk");
});

test("a tenant's max class clamps a header down, never up", () => {
  const res = resolver(BY_HEADER);
  const clamped = res.resolve({}, { "x-priority": "system", "x-tenant-id": "free" });
  assert.deepEqual(clamped, { priorityClass: "bulk", clamped: true, stripped: false });
  const lower = res.resolve({}, { "x-priority": "bulk", "x-tenant-id": "ops" });
  assert.deepEqual(lower, { priorityClass: "bulk", clamped: false, stripped: false });
  const none = res.resolve({}, { "x-tenant-id": "free" });
  assert.equal(none.priorityClass, "bulk", "even the default class is lowered to the ceiling");
  assert.equal(none.clamped, true);
});

test("without keys, a request with no known tenant gets default_max_class (interactive unless configured)", () => {
  const res = resolver(BY_HEADER);
  assert.equal(res.resolve({}, { "x-priority": "system" }).priorityClass, "interactive");
  const unknown = res.resolve({}, { "x-priority": "system", "x-tenant-id": "nobody" });
  assert.equal(unknown.priorityClass, "interactive");
  assert.equal(unknown.clamped, true);
  const proto = res.resolve({}, { "x-priority": "system", "x-tenant-id": "constructor" });
  assert.equal(proto.priorityClass, "interactive", "no Object.prototype lookups");
  const lenient = resolver({ ...BY_HEADER, defaultMaxClass: "system" });
  assert.equal(lenient.resolve({}, { "x-priority": "system" }).priorityClass, "system");
});

test("once keys are mapped, sending no key never gets more than a mapped key would", () => {
  // sk-free's tenant tops out at bulk, so leaving the key out cannot reach default.
  const res = resolver(TENANTS);
  assert.equal(res.resolve({}, { "x-priority": "interactive" }).priorityClass, "bulk");
  assert.equal(res.resolve({}, {}).priorityClass, "bulk");
  const unmapped = res.resolve({}, { "x-priority": "system", authorization: "Bearer sk-other" });
  assert.equal(unmapped.priorityClass, "bulk", "an unmapped key is no key");
  // With only higher tenants mapped, anonymous_max_class (default) is the ceiling.
  const opsOnly = resolver({ ...TENANTS, apiKeys: { "sk-ops": "ops" } });
  assert.equal(opsOnly.resolve({}, { "x-priority": "interactive" }).priorityClass, "default");
  const looser = resolver({
    ...TENANTS,
    apiKeys: { "sk-ops": "ops" },
    anonymousMaxClass: "interactive",
  });
  assert.equal(looser.resolve({}, { "x-priority": "system" }).priorityClass, "interactive");
});

test("a mapped bearer key names the tenant and wins over a trusted x-tenant-id", () => {
  const res = resolver({ ...TENANTS, trustTenantHeader: true });
  const r = res.resolve({}, { "x-priority": "system", authorization: "Bearer sk-free" });
  assert.equal(r.priorityClass, "bulk");
  const spoof = res.resolve(
    {},
    { "x-priority": "system", authorization: "bearer sk-free", "x-tenant-id": "ops" },
  );
  assert.equal(spoof.priorityClass, "bulk", "a free key cannot claim the ops tenant by header");
  const ops = res.resolve({}, { "x-priority": "system", authorization: "Bearer sk-ops" });
  assert.equal(ops.priorityClass, "system");
  const unmapped = res.resolve(
    {},
    { "x-priority": "system", authorization: "Bearer sk-other", "x-tenant-id": "ops" },
  );
  assert.equal(
    unmapped.priorityClass,
    "system",
    "an unmapped key leaves the trusted header to decide",
  );
});

test("with trust_tenant_header off (the default) only API keys name a tenant", () => {
  const res = resolver(TENANTS);
  const r = res.resolve({}, { "x-priority": "system", "x-tenant-id": "ops" });
  assert.equal(r.priorityClass, "bulk", "the header is ignored: no key, the anonymous ceiling");
  assert.equal(
    res.resolve({}, { "x-priority": "system", authorization: "Bearer sk-ops" }).priorityClass,
    "system",
  );
});

test("prepareRequest re-serialises a body whose class field it removed, and keeps the bytes otherwise", () => {
  const raw = Buffer.from(JSON.stringify({ model: "m", priority: "bulk", messages: [] }));
  const p = prepareRequest(DIALECTS.chat, raw, {}, ORDER, resolver(), "as-client");
  assert.equal(p.priorityClass, "bulk");
  assert.deepEqual(JSON.parse(p.body.toString()), { model: "m", messages: [] });
  const untouched = Buffer.from(JSON.stringify({ model: "m", priority: 3, messages: [] }));
  const q = prepareRequest(DIALECTS.chat, untouched, {}, ORDER, resolver(), "as-client");
  assert.equal(q.body, untouched, "the client's bytes go through as they are");
  assert.equal(q.priorityClass, "default");
});

test("prepareRequest without a resolver (priorities off) reads and strips nothing", () => {
  const raw = Buffer.from(JSON.stringify({ model: "m", priority: "bulk", messages: [] }));
  const p = prepareRequest(
    DIALECTS.chat,
    raw,
    { "x-priority": "nonsense" },
    ORDER,
    null,
    "as-client",
  );
  assert.equal(p.priorityClass, null);
  assert.equal(p.classClamped, false);
  assert.equal(p.body, raw);
});
