/**
 * An expected failure as one line for the log: a refused connection, a timeout or a bad answer
 * from a backend says everything in its message (and its cause's, where undici puts the
 * socket's error), while a stack trace would say only where in undici it was noticed.
 * Unexpected failures (a bug) keep their stack: log those as `err`.
 */
export function errorLine(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : "";
  return `${err.message}${cause}`.replaceAll("\n", " ");
}
