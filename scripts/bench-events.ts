/**
 * What maitred's own code costs per SSE event, measured on its own, without sockets: the events
 * of vLLM-like streams (scripts/vllm-like-upstream.ts, one event per chunk, as one write per
 * event arrives) are fed to the two per-event paths of a completion, in this process:
 *   - streamed: the relay a streamed answer goes through (src/proxy/sse-relay.ts), which cuts
 *     events, counts tokens and reads the usage;
 *   - plain: the rebuild of a plain answer (src/proxy/rebuild-completion.ts), which reads
 *     each event's tokens and builds the answer at the end.
 * It prints CPU µs per event (user + system of this process, which does nothing else), for
 * 4, 64 and 512 tokens. Each answer's own work (its first event read whole, the plain answer
 * built at its end) is spread over its events, which shows most at 4 tokens (7 events). The
 * socket read each event also costs a reader is not in it: `npm run bench:proxy` measures
 * that, with bare TCP and HTTP relays beside the router.
 *
 * With `--apis chat,messages,responses` the same for the agent APIs' streams (the Anthropic
 * Messages and OpenAI Responses events vLLM writes), through their relay
 * and rebuild (each dialect's, src/proxy/dialects/).
 *
 *   node scripts/bench-events.ts [--seconds 2] [--apis chat]
 */
import { markdownTable } from "../src/bench/markdown-table.ts";
import type { ScriptSpec } from "../src/bench/script-args.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";
import { type Api, answerEvents } from "../src/bench/vllm-like-upstream.ts";
import { listOf, positive } from "../src/config/values.ts";
import { DIALECTS } from "../src/proxy/dialects/all-dialects.ts";

const SPEC = {
  name: "bench:events",
  summary:
    "CPU µs per SSE event of maitred's own per-event code (stream relay and plain-answer rebuild), without sockets, at 4, 64 and 512 tokens.",
  runtime:
    "about 20 s (timed: 18.5 s on a shared core): 3 answer lengths × 2 paths × --seconds per API",
  flags: {
    seconds: {
      arg: "<s>",
      default: "2",
      description: "CPU time measured per case",
      check: positive(),
    },
    apis: {
      arg: "<list>",
      default: "chat",
      description: "APIs whose streams are fed: chat, messages, responses",
      check: listOf(["chat", "messages", "responses"]),
    },
  },
} satisfies ScriptSpec;
const { values, parsed } = scriptArgs(SPEC);
const apis: Api[] = parsed.apis;
const seconds = Number(values.seconds);

/** The chunks of one streamed answer of `tokens` tokens, usage included. */
function chunks(api: Api, tokens: number): Buffer[] {
  const events = answerEvents("chatcmpl-bench", 1_764_000_000, "meta-llama/Llama-3.1-8B-Instruct", {
    api,
    tokens,
    stream: true,
    includeUsage: true,
    promptTokens: 1000,
  });
  const out: Buffer[] = [];
  for (let k = 0; k < events.total; k++) out.push(Buffer.from(events.event(k)));
  return out;
}

const ignore = { onContent() {} };

/** Feed whole answers for about `seconds`; µs of CPU per event. */
function measure(stream: Buffer[], one: (stream: Buffer[]) => void): number {
  for (let i = 0; i < 200; i++) one(stream); // warm up: compiled before it is timed
  let events = 0;
  const start = process.cpuUsage();
  const deadline = performance.now() + seconds * 1000;
  while (performance.now() < deadline) {
    for (let i = 0; i < 50; i++) one(stream);
    events += 50 * stream.length;
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / events;
}

const streamed = (api: Api) => (stream: Buffer[]) => {
  // The client asks for no usage: the relay strips the usage chunk, as maitred does then.
  const relay = DIALECTS[api].relay(false, ignore);
  for (const c of stream) relay.push(c);
  relay.flush();
  if (relay.usage === null) throw new Error("the relay read no usage");
};

const plain = (api: Api) => (stream: Buffer[]) => {
  const r = DIALECTS[api].rebuild({ flavour: "vllm", toolCallContent: null }, ignore);
  for (const c of stream) r.push(c);
  if (r.finish()?.status !== 200) throw new Error("the rebuild made no answer");
};

const rows: string[][] = [];
for (const tokens of [4, 64, 512]) {
  for (const api of apis) {
    const stream = chunks(api, tokens);
    rows.push([
      api,
      String(tokens),
      String(stream.length),
      measure(stream, streamed(api)).toFixed(2),
      measure(stream, plain(api)).toFixed(2),
    ]);
  }
}
console.log(
  `CPU µs per event, maitred's per-event code alone (${seconds} s a case, one event per chunk):\n`,
);
console.log(
  markdownTable(["api", "tokens", "events", "streamed (relay)", "plain (rebuild)"], rows, 2),
);
