/**
 * What maitred's own code costs per SSE event (`bench:events`), measured on its own, without
 * sockets: the events of vLLM-like streams (src/bench/upstream, one event per chunk, as one
 * write per event arrives) are fed to the two per-event paths of a completion, in this process:
 *   - streamed: the relay a streamed answer goes through, which cuts events, counts tokens and
 *     reads the usage;
 *   - plain: the rebuild of a plain answer, which reads each event's tokens and builds the
 *     answer at the end.
 * Each answer's own work (its first event read whole, the plain answer built at its end) is
 * spread over its events, which shows most at 4 tokens (7 events). The socket read each event
 * also costs a reader is not in it: `bench:proxy` measures that, beside bare relays.
 *
 * The relay and the rebuild are each API's dialect (src/proxy/dialects/), handed in by the
 * caller: the bench drives the router from outside and imports nothing of the proxy, so it
 * names here only what it calls of a dialect.
 */

import { listOf, positive } from "../../config/values.ts";
import { markdownTable } from "../markdown-table.ts";
import type { ScriptSpec } from "../script-args.ts";
import { answerEvents } from "../upstream/answer-events.ts";
import type { Api } from "../upstream/upstream-request.ts";

export const BENCH_EVENTS_SPEC = {
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

/** What a dialect's per-event paths take: the hooks told of each content event. */
interface ContentHooks {
  onContent(count: number, previous: number): void;
}

/** What the bench calls of a dialect (src/proxy/dialects/dialect.ts's `Dialect` has these). */
export interface EventPaths {
  relay(
    clientWantsUsage: boolean,
    hooks: ContentHooks,
  ): { push(chunk: Buffer): unknown; flush(): unknown; readonly usage: unknown };
  rebuild(
    settings: { flavour: "vllm"; toolCallContent: null },
    hooks: ContentHooks,
  ): { push(chunk: Buffer): void; finish(): { status: number } | null };
}

/** Answer lengths measured, in tokens: the short, the typical and the long agent step. */
export const EVENT_TOKENS = [4, 64, 512] as const;

/** The chunks of one streamed answer of `tokens` tokens, usage included, one event each. */
export function answerChunks(api: Api, tokens: number): Buffer[] {
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

const ignore: ContentHooks = { onContent() {} };

/** One whole answer through the relay; throws when the relay read no usage. */
export const relayed = (paths: EventPaths) => (stream: Buffer[]) => {
  // The client asks for no usage: the relay strips the usage chunk, as maitred does then.
  const relay = paths.relay(false, ignore);
  for (const c of stream) relay.push(c);
  relay.flush();
  if (relay.usage === null) throw new Error("the relay read no usage");
};

/** One whole answer through the rebuild; throws when it made no answer. */
export const rebuilt = (paths: EventPaths) => (stream: Buffer[]) => {
  const r = paths.rebuild({ flavour: "vllm", toolCallContent: null }, ignore);
  for (const c of stream) r.push(c);
  if (r.finish()?.status !== 200) throw new Error("the rebuild made no answer");
};

export interface MeasureOptions {
  /** CPU time is read over about this much wall time. */
  seconds: number;
  /** Whole answers fed before the measure, so that it times compiled code (200 unless said). */
  warmup?: number;
  /** This process's CPU time in µs (process.cpuUsage's user + system unless said). */
  cpuMicros?: () => number;
}

const processCpuMicros = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/**
 * Feeds whole answers for about `seconds`; µs of CPU per event. The CPU is this process's,
 * which does nothing else meanwhile.
 */
export function cpuPerEvent(
  stream: Buffer[],
  one: (stream: Buffer[]) => void,
  o: MeasureOptions,
): number {
  const cpu = o.cpuMicros ?? processCpuMicros;
  for (let i = 0; i < (o.warmup ?? 200); i++) one(stream);
  let events = 0;
  const start = cpu();
  const deadline = performance.now() + o.seconds * 1000;
  // At least one batch, so that a short measure still has events to divide by.
  do {
    for (let i = 0; i < 50; i++) one(stream);
    events += 50 * stream.length;
  } while (performance.now() < deadline);
  return (cpu() - start) / events;
}

export interface EventCostRow {
  api: Api;
  tokens: number;
  events: number;
  streamedUs: number;
  plainUs: number;
}

/** Each answer length for each API, both paths: the rows of the printed table. */
export function measureEventCosts(
  dialects: Readonly<Record<Api, EventPaths>>,
  apis: readonly Api[],
  o: MeasureOptions,
  tokens: readonly number[] = EVENT_TOKENS,
): EventCostRow[] {
  const rows: EventCostRow[] = [];
  for (const n of tokens) {
    for (const api of apis) {
      const stream = answerChunks(api, n);
      rows.push({
        api,
        tokens: n,
        events: stream.length,
        streamedUs: cpuPerEvent(stream, relayed(dialects[api]), o),
        plainUs: cpuPerEvent(stream, rebuilt(dialects[api]), o),
      });
    }
  }
  return rows;
}

/** The printed report: a line saying what was measured, then the table. */
export function eventCostsReport(rows: readonly EventCostRow[], seconds: number): string {
  const table = markdownTable(
    ["api", "tokens", "events", "streamed (relay)", "plain (rebuild)"],
    rows.map((r) => [
      r.api,
      String(r.tokens),
      String(r.events),
      r.streamedUs.toFixed(2),
      r.plainUs.toFixed(2),
    ]),
    2,
  );
  return `CPU µs per event, maitred's per-event code alone (${seconds} s a case, one event per chunk):\n\n${table}`;
}
