import assert from "node:assert/strict";
import type { IncomingMessage } from "node:http";
import { test } from "node:test";
import type { MaitredError } from "../../src/errors.ts";
import { checkAdmin, isLoopback } from "../../src/proxy/admin-access.ts";

const from = (remoteAddress: string, authorization?: string) =>
  ({
    socket: { remoteAddress },
    headers: authorization ? { authorization } : {},
  }) as IncomingMessage;
const TOKEN = "s3cret-admin-token-0123";

test("loopback addresses, IPv4, IPv6 and IPv4-mapped, and nothing else", () => {
  for (const a of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"])
    assert.ok(isLoopback(a), a);
  for (const a of [
    "10.0.0.1",
    "::ffff:10.0.0.1",
    "0.0.0.0",
    "::",
    "128.0.0.1",
    "1127.0.0.1",
    undefined,
  ])
    assert.ok(!isLoopback(a), String(a));
});

test("without a token the admin routes answer loopback clients only (403 otherwise)", () => {
  checkAdmin(from("127.0.0.1"), null);
  assert.throws(
    () => checkAdmin(from("192.168.1.7", `Bearer ${TOKEN}`), null),
    (e: MaitredError) => e.status === 403 && e.code === "forbidden",
  );
});

test("with a token every client needs it, loopback too; a wrong or missing one is a 401", () => {
  checkAdmin(from("192.168.1.7", `Bearer ${TOKEN}`), TOKEN);
  checkAdmin(from("127.0.0.1", `bearer   ${TOKEN} `), TOKEN);
  for (const auth of [
    undefined,
    `Bearer ${TOKEN}x`,
    `Bearer ${TOKEN.slice(1)}`,
    TOKEN,
    "Basic abc",
  ]) {
    assert.throws(
      () => checkAdmin(from("127.0.0.1", auth), TOKEN),
      (e: MaitredError) => e.status === 401 && e.headers["www-authenticate"] === "Bearer",
      String(auth),
    );
  }
});
