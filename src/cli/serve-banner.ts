/**
 * What `maitred serve` prints on stdout once it listens: where it is and a request to try
 * (`npm start` "prints the URL and a curl example"). Logs stay on stderr.
 */

/** How long to wait for the model list before printing a placeholder model name. */
const MODELS_TIMEOUT_MS = 2000;

/**
 * `bounds`: the waiting bounds in force (tr only), said once at startup so an operator sees
 * which preset runs before a client waits on it.
 */
export async function readyBanner(url: string, bounds: string | null = null): Promise<string> {
  const model = (await firstModel(url)) ?? "<model>";
  const body = JSON.stringify({
    model,
    program_id: "agent-1",
    messages: [{ role: "user", content: "Hello!" }],
    max_tokens: 32,
  });
  return [
    `maitred is serving on ${url}`,
    ...(bounds === null ? [] : [`Bounds on waiting: ${bounds}.`]),
    "",
    "Try it:",
    `  curl -s ${url}/v1/chat/completions -H 'content-type: application/json' \\`,
    `    -d '${body}'`,
    `  curl -s ${url}/programs`,
    `  curl -s -X POST ${url}/programs/release -H 'content-type: application/json' -d '{"program_id":"agent-1"}'`,
    "",
    `Point an OpenAI client at ${url}/v1 and send extra_body={"program_id": ...}. Ctrl-C stops.`,
    "",
  ].join("\n");
}

async function firstModel(url: string): Promise<string | null> {
  try {
    const res = await fetch(`${url}/v1/models`, { signal: AbortSignal.timeout(MODELS_TIMEOUT_MS) });
    if (!res.ok) return null;
    const list = (await res.json()) as { data?: { id?: unknown }[] };
    const id = list.data?.[0]?.id;
    return typeof id === "string" ? id : null;
  } catch {
    return null;
  }
}
