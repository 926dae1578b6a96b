export type Json = Record<string, unknown>;

/** `v` when it is a JSON object (not null, not an array), else undefined. */
export const asObj = (v: unknown): Json | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Json) : undefined;
