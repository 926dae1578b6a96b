/**
 * A backend's error, in whichever shape it wrote it, and as the OpenAI envelope
 * `{"error":{"message","type","param","code"}}`. Backends do not all write that envelope:
 * SGLang (and vLLM before it adopted the envelope) writes the same fields flat,
 * `{"object":"error","message","type","param","code"}`, and a FastAPI server's own refusals are
 * `{"detail":…}`. A client reads an error out of an SSE stream only from an event with an
 * `error` member (the official OpenAI SDKs throw on it and take anything else for a chunk), so
 * an error that has to travel as an event is moved into the envelope here, the backend's own
 * fields kept as it wrote them.
 */
import { errorTypeForStatus } from "../errors.ts";
import { asObj, type Json } from "../util/json-object.ts";

/** The envelope's inner object as the backend filled it (any field may be missing or null). */
export interface BackendError {
  message?: unknown;
  type?: unknown;
  param?: unknown;
  code?: unknown;
}

/**
 * The error `doc` carries, in either shape a backend writes one: the envelope's `error`, or
 * the flat body (`object: "error"`) whose fields are the envelope's. undefined when `doc` is
 * no error.
 */
export function backendErrorOf(doc: Json): BackendError | undefined {
  const inner = asObj(doc.error);
  if (inner !== undefined) return inner;
  if (doc.object !== "error") return undefined;
  const { message, type, param, code } = doc;
  return { message, type, param, code };
}

/** What a body that is no error of either shape says, as the error's message. */
function messageOf(doc: Json | undefined, text: string, status: number): string {
  if (typeof doc?.message === "string") return doc.message;
  if (typeof doc?.detail === "string") return doc.detail;
  if (doc?.detail !== undefined) return JSON.stringify(doc.detail);
  return text.trim() || `Backend answered ${status}.`;
}

/**
 * The body a backend answered with the error status `status`, as the envelope's JSON: an
 * envelope stays as the backend wrote it, the flat shape's fields move into one as they are,
 * and anything else (FastAPI's `detail`, plain text) becomes the message. A field the backend
 * left out is filled as vLLM fills it (`type` named after the status, `param` null), but
 * `code` then stays null: the backend named none, and the status is no name (a `code` maitred
 * fills in itself is one of its stable strings, errors.ts).
 */
export function backendErrorJson(status: number, body: Buffer | string): string {
  const text = typeof body === "string" ? body : body.toString("utf8");
  let doc: Json | undefined;
  try {
    doc = asObj(JSON.parse(text));
  } catch {
    // not JSON: its text is the message
  }
  if (doc !== undefined && asObj(doc.error) !== undefined) return JSON.stringify(doc);
  const own = doc === undefined ? undefined : backendErrorOf(doc);
  const error = {
    message: own?.message ?? messageOf(doc, text, status),
    type: own?.type ?? errorTypeForStatus(status),
    param: own?.param ?? null,
    code: own?.code ?? null,
  };
  return JSON.stringify({ error });
}
