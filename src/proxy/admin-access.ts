/**
 * Who may read the admin routes: the routes that show more than a caller's own programs
 * (every program with its tokens and timings, the backends' books, the step profiles). With
 * `--admin-token` they need `Authorization: Bearer <token>` (401 otherwise), as vLLM's
 * `--api-key` and LiteLLM's master key do; without one they answer loopback clients only
 * (403 otherwise), as Envoy keeps its admin interface on localhost. The OpenAI routes,
 * `/health` and `/metrics` are not admin routes.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { Errors } from "../errors.ts";

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 addresses. */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  return address === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

function bearerOf(incoming: IncomingMessage): string | null {
  const header = incoming.headers.authorization;
  if (typeof header !== "string") return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m === null ? null : m[1];
}

/** Same bytes, compared in time that does not depend on where they first differ. */
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Throws the 401 or 403 envelope unless `incoming` may use the admin routes. `queryToken` is
 * the token given as `?token=` where a browser cannot send a header (the live page).
 */
export function checkAdmin(
  incoming: IncomingMessage,
  adminToken: string | null,
  queryToken?: string,
): void {
  if (adminToken === null) {
    if (!isLoopback(incoming.socket.remoteAddress)) throw Errors.forbidden();
    return;
  }
  const given = bearerOf(incoming) ?? queryToken ?? null;
  if (given === null || !sameSecret(given, adminToken)) throw Errors.unauthorized();
}
