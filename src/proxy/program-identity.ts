/**
 * Who a request belongs to (task: "program identity, first match wins, order configurable").
 * Reads the body and headers, and removes maitred-only body fields so the backend never sees
 * them (ThunderAgent strips `program_id` and `extra_body.program_id`). Dynamo's `nvext`
 * stays: a Dynamo backend may want it.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { IdentitySource } from "../config/identity-sources.ts";
import { Errors } from "../errors.ts";
import { firstHeader as header } from "./headers.ts";

export interface ProgramIdentity {
  programId: string | null;
  parentProgramId: string | null;
  final: boolean;
  /** True when maitred-only fields were removed from the body. */
  stripped: boolean;
}

/** Longest accepted program id; ids end up in logs, CSV rows and JSON keys. */
const MAX_ID_LENGTH = 512;

/** C0 controls and DEL. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Agent-harness session headers. */
const SESSION_HEADERS = [
  "x-session-id",
  "x-claude-code-session-id",
  "x-dynamo-session-id",
  // Codex CLI: its session's id (it sends the same in `thread-id` and `x-client-request-id`).
  "session-id",
] as const;
const PARENT_HEADERS = [
  "x-parent-program-id",
  "x-parent-session-id",
  "x-dynamo-parent-session-id",
] as const;
const FINAL_HEADERS = ["x-program-final", "x-dynamo-session-final"] as const;
/** Body fields maitred consumes (top level and inside `extra_body`). */
const MAITRED_FIELDS = ["program_id", "program_final", "parent_program_id"] as const;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A program id as maitred accepts it (trimmed), null when absent or blank; throws 400. */
export function parseProgramId(v: unknown, param: string): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  if (typeof v !== "string") throw Errors.invalidProgramId(`${param} must be a string`, param);
  const s = v.trim();
  if (s === "") return null;
  if (s.length > MAX_ID_LENGTH) {
    throw Errors.invalidProgramId(`${param} is longer than ${MAX_ID_LENGTH} characters`, param);
  }
  // A lone UTF-16 surrogate cannot be written as UTF-8 (in a header, a log line, a label).
  if (!s.isWellFormed()) {
    throw Errors.invalidProgramId(`${param} is not valid Unicode (a lone surrogate)`, param);
  }
  // Control characters have no place in an id that is echoed in headers and logs, and one of
  // them separates a tenant from its program ids (program-scope.ts).
  if (CONTROL.test(s)) {
    throw Errors.invalidProgramId(`${param} holds a control character`, param);
  }
  return s;
}

function truthy(v: unknown): boolean {
  if (v === true) return true;
  return typeof v === "string" && ["true", "1", "yes"].includes(v.trim().toLowerCase());
}

/** The program a response belongs to, by the response's id (response-homes.ts). */
export type ResponseProgram = (responseId: string) => string | null;

/**
 * Claude Code's session id from a Messages request's `metadata.user_id`: a JSON string holding
 * `session_id` (since 2.1), or the older `user_<hash>_account_<uuid>_session_<uuid>`.
 */
function metadataSession(body: Json): string | null {
  const userId = isObject(body.metadata) ? body.metadata.user_id : undefined;
  if (typeof userId !== "string") return null;
  if (userId.startsWith("{")) {
    try {
      const doc: unknown = JSON.parse(userId);
      return isObject(doc) ? parseProgramId(doc.session_id, "metadata.user_id.session_id") : null;
    } catch {
      return null;
    }
  }
  const m = /_session_([0-9A-Za-z-]+)$/.exec(userId);
  return m === null ? null : parseProgramId(m[1], "metadata.user_id");
}

function fromSource(
  source: IdentitySource,
  body: Json,
  headers: IncomingHttpHeaders,
  responseProgram: ResponseProgram,
): string | null {
  switch (source) {
    case "program_id":
      return parseProgramId(body.program_id, "program_id");
    case "extra_body":
      return isObject(body.extra_body)
        ? parseProgramId(body.extra_body.program_id, "extra_body.program_id")
        : null;
    case "x-program-id":
      return parseProgramId(header(headers, "x-program-id"), "x-program-id");
    case "session-headers":
      for (const name of SESSION_HEADERS) {
        const id = parseProgramId(header(headers, name), name);
        if (id !== null) return id;
      }
      return null;
    case "metadata":
      return metadataSession(body);
    case "previous_response_id":
      return typeof body.previous_response_id === "string"
        ? responseProgram(body.previous_response_id)
        : null;
    case "prompt_cache_key":
      return parseProgramId(body.prompt_cache_key, "prompt_cache_key");
    case "nvext": {
      const ctx = isObject(body.nvext) ? body.nvext.agent_context : undefined;
      return isObject(ctx)
        ? parseProgramId(ctx.trajectory_id, "nvext.agent_context.trajectory_id")
        : null;
    }
    default: {
      const never: never = source;
      throw new Error(`unknown identity source ${String(never)}`);
    }
  }
}

function parentOf(body: Json, headers: IncomingHttpHeaders): string | null {
  const extra = isObject(body.extra_body) ? body.extra_body : {};
  const ctx =
    isObject(body.nvext) && isObject(body.nvext.agent_context) ? body.nvext.agent_context : {};
  return (
    parseProgramId(body.parent_program_id, "parent_program_id") ??
    parseProgramId(extra.parent_program_id, "extra_body.parent_program_id") ??
    PARENT_HEADERS.reduce<string | null>(
      (acc, h) => acc ?? parseProgramId(header(headers, h), h),
      null,
    ) ??
    parseProgramId(ctx.parent_trajectory_id, "nvext.agent_context.parent_trajectory_id")
  );
}

function finalOf(body: Json, headers: IncomingHttpHeaders): boolean {
  const extra = isObject(body.extra_body) ? body.extra_body : {};
  const ctx =
    isObject(body.nvext) && isObject(body.nvext.agent_context) ? body.nvext.agent_context : {};
  return (
    truthy(body.program_final) ||
    truthy(extra.program_final) ||
    FINAL_HEADERS.some((h) => truthy(header(headers, h))) ||
    ctx.trajectory_final === true
  );
}

function strip(body: Json): boolean {
  let stripped = false;
  for (const f of MAITRED_FIELDS) {
    if (f in body) {
      delete body[f];
      stripped = true;
    }
  }
  const extra = body.extra_body;
  if (isObject(extra)) {
    for (const f of MAITRED_FIELDS) {
      if (f in extra) {
        delete extra[f];
        stripped = true;
      }
    }
    if (Object.keys(extra).length === 0) delete body.extra_body;
  }
  return stripped;
}

/** Resolve identity, then strip maitred-only fields from `body` in place. */
export function resolveProgramIdentity(
  body: Json,
  headers: IncomingHttpHeaders,
  order: readonly IdentitySource[],
  responseProgram: ResponseProgram = () => null,
): ProgramIdentity {
  let programId: string | null = null;
  for (const source of order) {
    programId = fromSource(source, body, headers, responseProgram);
    if (programId !== null) break;
  }
  const parentProgramId = parentOf(body, headers);
  const final = finalOf(body, headers);
  return { programId, parentProgramId, final, stripped: strip(body) };
}
