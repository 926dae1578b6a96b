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
 *   node scripts/bench-events.ts [--seconds 2]
 */
import { parseArgs } from "node:util";
import { createCompletionRebuilder } from "../src/proxy/rebuild-completion.ts";
import { createSseRelay } from "../src/proxy/sse-relay.ts";
import { markdownTable } from "./proxy-bench-kit.ts";
import { StreamEvents } from "./vllm-like-upstream.ts";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "2" } } });
const seconds = Number(values.seconds);
if (!(seconds > 0)) throw new Error(`--seconds must be a number > 0, not ${values.seconds}`);

/** The chunks of one streamed answer of `tokens` tokens, usage included. */
function chunks(tokens: number): Buffer[] {
  const events = new StreamEvents(
    "chatcmpl-bench",
    1_764_000_000,
    "meta-llama/Llama-3.1-8B-Instruct",
    {
      tokens,
      stream: true,
      includeUsage: true,
      promptTokens: 1000,
    },
  );
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

function streamed(stream: Buffer[]): void {
  const relay = createSseRelay(true, ignore);
  for (const c of stream) relay.push(c);
  relay.flush();
  if (relay.usage === null) throw new Error("the relay read no usage");
}

function plain(stream: Buffer[]): void {
  const r = createCompletionRebuilder(
    { endpoint: "chat", flavour: "vllm", toolCallContent: null },
    ignore,
  );
  for (const c of stream) r.push(c);
  if (r.finish()?.status !== 200) throw new Error("the rebuild made no answer");
}

const rows: string[][] = [];
for (const tokens of [4, 64, 512]) {
  const stream = chunks(tokens);
  rows.push([
    String(tokens),
    String(stream.length),
    measure(stream, streamed).toFixed(2),
    measure(stream, plain).toFixed(2),
  ]);
}
console.log(
  `CPU µs per event, maitred's per-event code alone (${seconds} s a case, one event per chunk):\n`,
);
console.log(markdownTable(["tokens", "events", "streamed (relay)", "plain (rebuild)"], rows));
