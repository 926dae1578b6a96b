/**
 * Program ids are scoped by caller: the core keys a tenant's program as `<tenant>␟<id>` (the
 * separator is U+001F, which a program id may not hold, see program-identity.ts), and an
 * anonymous caller's program as its bare id. So the same id from two tenants is two programs,
 * an anonymous caller can never name a tenant's program, and a setup without tenants keys
 * programs exactly as the ids the clients send.
 */

/** The unit separator, a control character no accepted program id contains. */
export const SCOPE_SEPARATOR = "\u001f";

/** The core's key for program `id` sent by `tenant` (null = anonymous). */
export function scopedProgramId(tenant: string | null, id: string): string {
  return tenant === null ? id : `${tenant}${SCOPE_SEPARATOR}${id}`;
}

/** The caller and the id a core key was made from (the id holds no separator; a tenant may). */
export function splitProgramKey(key: string): { tenant: string | null; programId: string } {
  const at = key.lastIndexOf(SCOPE_SEPARATOR);
  return at < 0
    ? { tenant: null, programId: key }
    : { tenant: key.slice(0, at), programId: key.slice(at + 1) };
}
