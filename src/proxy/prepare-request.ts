/**
 * Turns a client's completion request into what the core and the backend need: identity,
 * the message sizes the core estimates tokens from, the streaming flags, the priority class
 * (when priorities are on) and the body to forward. The body is re-serialised only when maitred
 * changed it (identity or class fields removed, a stream asked for or its usage, as the
 * request's dialect prepares it); otherwise the client's bytes go through untouched. What
 * differs between the APIs (their messages, how their stream is prepared, a stored response
 * they continue) the request's dialect says (dialects/).
 */
import type { IncomingHttpHeaders } from "node:http";
import type { IdentitySource } from "../config/identity-sources.ts";
import type { PriorityClass, ProgramBudget } from "../core/api.ts";
import { Errors } from "../errors.ts";
import type { CallerResolver } from "./caller.ts";
import type { Dialect, StreamPlan, UpstreamStream } from "./dialects/dialect.ts";
import type { BudgetResolver } from "./program-budget.ts";
import { type ProgramIdentity, resolveProgramIdentity } from "./program-identity.ts";
import { scopedProgramId } from "./program-scope.ts";
import type { ClassResolver } from "./request-class.ts";
import { type ResponseHomes, reachable } from "./response-homes.ts";
import { spliceTopLevel } from "./splice-body.ts";

export interface PreparedRequest {
  /** The API the request speaks, which every step of its trip asks what differs. */
  dialect: Dialect;
  identity: ProgramIdentity;
  /** The caller's tenant (caller.ts); null = anonymous. */
  tenant: string | null;
  /** The core's keys for the program and its parent: the ids scoped by the caller. */
  programKey: string | null;
  parentKey: string | null;
  stream: boolean;
  /**
   * The client asked for a plain answer and the backend is asked for a stream, which the proxy
   * rebuilds into that answer; null when the answer is relayed as the backend sends it.
   */
  rebuild: StreamPlan["rebuild"];
  /** The client asked for the usage chunk; when false maitred drops the one it added. */
  clientWantsUsage: boolean;
  messageChars: number[];
  maxWaitMs: number | undefined;
  /** Effective (clamped) class; null while priorities are off. */
  priorityClass: PriorityClass | null;
  /** The tenant's ceiling lowered the requested class. */
  classClamped: boolean;
  /** The budget its program is asked to run under (program-budget.ts); undefined = none. */
  budget: ProgramBudget | undefined;
  /**
   * The stored response a Responses request continues (`previous_response_id`): its backend
   * is the only one that can serve it (response-homes.ts); null = none.
   */
  previousResponseId: string | null;
  /**
   * That response is another caller's (response-homes.ts `reachable`): the request goes as one
   * naming an id no backend stores, pinned nowhere and answered by maitred with that 404
   * (unknown-response.ts), so the backend storing it is never asked.
   */
  previousResponseForeign: boolean;
  body: Buffer;
  /** `body`'s top-level keys in order: where a member set at forward is found (withPriority). */
  keys: readonly string[];
}

type Json = Record<string, unknown>;

/**
 * Deepest nesting a request may have. OpenAI requests nest a handful of levels (a tool's JSON
 * schema a few more); Python's JSON decoder, which the backends use, stops near 1,000, and
 * walking a deeper value would only spend the router's stack.
 */
export const MAX_JSON_DEPTH = 128;

/** Whether `doc` nests deeper than `limit` (walked without recursion; strings are not entered). */
function tooDeep(doc: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[doc, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (depth > limit) return true;
    if (Array.isArray(v)) {
      for (const x of v) if (typeof x === "object" && x !== null) stack.push([x, depth + 1]);
    } else if (typeof v === "object" && v !== null) {
      for (const k in v) {
        const x = (v as Json)[k];
        if (typeof x === "object" && x !== null) stack.push([x, depth + 1]);
      }
    }
  }
  return false;
}

function parseBody(raw: Buffer): Json {
  let doc: unknown;
  try {
    doc = JSON.parse(raw.toString("utf8"));
  } catch (err) {
    throw Errors.invalidJson((err as Error).message);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
    throw Errors.badRequest("Request body must be a JSON object.");
  }
  if (tooDeep(doc, MAX_JSON_DEPTH)) throw Errors.jsonTooDeep(MAX_JSON_DEPTH);
  return doc as Json;
}

function maxWaitOf(headers: IncomingHttpHeaders): number | undefined {
  const raw = headers["x-maitred-max-wait-ms"];
  if (raw === undefined) return undefined;
  const n = Number(Array.isArray(raw) ? raw[0] : raw);
  if (!Number.isFinite(n) || n < 0) {
    throw Errors.badRequest(
      "x-maitred-max-wait-ms must be a number of milliseconds ≥ 0",
      "x-maitred-max-wait-ms",
    );
  }
  return n;
}

export function prepareRequest(
  dialect: Dialect,
  raw: Buffer,
  headers: IncomingHttpHeaders,
  identityOrder: readonly IdentitySource[],
  classes: ClassResolver | null = null,
  upstreamStream: UpstreamStream = "always",
  callers: CallerResolver | null = null,
  budgets: BudgetResolver | null = null,
  homes: Pick<ResponseHomes, "get"> | null = null,
): PreparedRequest {
  const body = parseBody(raw);
  const keysBefore = Object.keys(body);
  const maxWaitMs = maxWaitOf(headers);
  const tenant = callers === null ? null : callers.tenantOf(headers);
  // The stored responses as this caller sees them: another caller's is no response at all.
  const homeOf = (id: string) => {
    const home = homes?.get(id);
    return reachable(home, tenant) ? home : undefined;
  };
  // A chain begun without an id is followed from its second step, named after its first.
  const identity = resolveProgramIdentity(body, headers, identityOrder, (id) => {
    const home = homeOf(id);
    return home === undefined ? null : (home.programId ?? id);
  });
  const budget = budgets?.budgetOf(tenant, headers);
  const scoped = (id: string | null) => (id === null ? null : scopedProgramId(tenant, id));
  const cls = classes === null ? null : classes.resolve(body, headers);
  const stream = body.stream === true;
  /** Top-level members maitred sets; removed ones are found by comparing the keys. */
  const put: (readonly [string, unknown])[] = [];
  // Identity fields may have been taken out of `extra_body` in place.
  if (identity.stripped && typeof body.extra_body === "object" && body.extra_body !== null)
    put.push(["extra_body", body.extra_body]);
  const plan = dialect.prepareStream(body, stream, upstreamStream);
  for (const member of plan.put) put.push(member);
  const dropped = new Set(keysBefore.filter((k) => !Object.hasOwn(body, k)));
  const previousResponseId = dialect.previousResponseId(body);
  return {
    dialect,
    identity,
    tenant,
    programKey: scoped(identity.programId),
    parentKey: scoped(identity.parentProgramId),
    stream,
    rebuild: plan.rebuild,
    clientWantsUsage: plan.clientWantsUsage,
    messageChars: dialect.messageChars(body),
    maxWaitMs,
    priorityClass: cls?.priorityClass ?? null,
    classClamped: cls?.clamped === true,
    budget,
    previousResponseId,
    previousResponseForeign:
      previousResponseId !== null && !reachable(homes?.get(previousResponseId), tenant),
    body: dropped.size > 0 || put.length > 0 ? spliceTopLevel(raw, dropped, put, keysBefore) : raw,
    keys: keysAfter(keysBefore, dropped, put),
  };
}

/** The forwarded body's keys: the client's kept in place, then those maitred set, in order. */
function keysAfter(
  before: readonly string[],
  dropped: ReadonlySet<string>,
  put: readonly (readonly [string, unknown])[],
): readonly string[] {
  if (dropped.size === 0 && put.length === 0) return before;
  const set = new Set(put.map(([k]) => k));
  return [...before.filter((k) => !dropped.has(k) && !set.has(k)), ...set];
}

const NO_DROP: ReadonlySet<string> = new Set();

/**
 * The body as it goes to a backend that schedules by priority: its `priority` member set to the
 * engine order's value (the client's own, if it sent one, replaced), the rest copied as bytes.
 * A client cannot jump the order by naming a priority, nor push others back by naming a worse one.
 */
export function withPriority(req: PreparedRequest, priority: number | null): Buffer {
  if (priority === null || !req.dialect.takesPriority) return req.body;
  return spliceTopLevel(req.body, NO_DROP, [["priority", priority]], req.keys);
}
