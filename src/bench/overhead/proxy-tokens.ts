/**
 * The proxy benchmark's tokens phase (`npm run bench:proxy -- --phases tokens`): the router's
 * CPU per request and per SSE event, by answer length, client kind and API, beside the bare TCP
 * and HTTP relays on the same upstream, and the tables it prints. The router, the relays and the
 * upstream each run as their own process, so each one's CPU is read from its own /proc entry.
 */

import { type RouterProcess, startServeProcess } from "../maitred-process.ts";
import { grouped, markdownTable } from "../markdown-table.ts";
import { progress } from "../script-entry.ts";
import { API_PATHS, type Api } from "../upstream/upstream-request.ts";
import type { UpstreamStats } from "../upstream/vllm-like-server.ts";
import {
  type CountingUpstream,
  startHttpRelay,
  startTcpRelay,
  tokenRequestBody,
} from "./proxy-bench-kit.ts";

/** One row of the tokens table: a client kind and answer length at a number of connections. */
export interface TokenCase {
  api: Api;
  stream: boolean;
  tokens: number;
  connections: number;
}

export interface TokenRow extends TokenCase {
  upstream: string;
  direct_rps: number;
  router_rps: number;
  /** Router CPU seconds over its run, read from its process. */
  router_cpu_s: number;
  router_seconds: number;
  /** Requests completed through the router and what the upstream counted for them. */
  requests: number;
  events: number;
  writes: number;
  cpu_us_per_request: number;
  /** null when the upstream wrote no event (a plain answer relayed as it came). */
  cpu_us_per_event: number | null;
  /** The same load through the bare TCP relay (scripts/tcp-relay.ts): CPU per request and event. */
  relay_cpu_us_per_request: number;
  relay_cpu_us_per_event: number | null;
  /** SSE events the upstream wrote per request through the relay (no usage event added). */
  relay_events_per_request: number;
  /** The same load through the bare HTTP relay (scripts/http-relay.ts): Node's server and undici. */
  http_relay_cpu_us_per_request: number;
  http_relay_cpu_us_per_event: number | null;
  http_relay_events_per_request: number;
}

/** One closed-loop load of the tokens phase, as the benchmark's load generator runs it. */
export interface TokenLoadCommand extends TokenCase {
  kind: "tokens";
  url: string;
  seconds: number;
}

/**
 * Runs one load and returns what it counted: `n` requests read in full over `seconds` (the
 * benchmark runs it in a worker thread of its own, so the load's CPU is not the router's).
 */
export type TokenLoader = (cmd: TokenLoadCommand) => Promise<Record<string, number>>;

/** Plain and streamed clients at 4, 64 and 512 tokens; small plain answers also at 64 connections. */
export function tokenCases(connections: number, apis: Api[]): TokenCase[] {
  const cases = [
    { stream: false, tokens: 4, connections },
    { stream: false, tokens: 4, connections: 64 },
    { stream: false, tokens: 64, connections },
    { stream: false, tokens: 512, connections },
    { stream: true, tokens: 4, connections },
    { stream: true, tokens: 64, connections },
    { stream: true, tokens: 512, connections },
  ];
  // Each case once per API, one after the other, so that ratios between APIs come from runs
  // close in time.
  return cases.flatMap((c) => apis.map((api) => ({ api, ...c })));
}

/**
 * What the client gets through the router is what it gets directly: the same text in a plain
 * answer (rebuilt from the stream) with the usage of `tokens` tokens, and the same number of
 * SSE events in a stream (maitred adds the usage event the client did not ask for upstream and
 * takes it out again). A broken relay would otherwise show up as a fast one.
 */
async function checkAnswers(direct: string, router: string, api: Api, tokens = 4): Promise<void> {
  const ask = async (url: string, stream: boolean) => {
    const res = await fetch(`${url}${API_PATHS[api]}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: tokenRequestBody("check", stream, tokens, api),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${text}`);
    return text;
  };
  type Plain = {
    choices?: { message?: { content?: string } }[];
    content?: { text?: string }[];
    output?: { content?: { text?: string }[] }[];
    usage?: Record<string, number>;
  };
  const d = JSON.parse(await ask(direct, false)) as Plain;
  const r = JSON.parse(await ask(router, false)) as Plain;
  const text = (p: Plain) =>
    p.choices?.[0]?.message?.content ?? p.content?.[0]?.text ?? p.output?.[0]?.content?.[0]?.text;
  const completion = (p: Plain) => p.usage?.completion_tokens ?? p.usage?.output_tokens;
  if (text(r) !== text(d) || completion(r) !== tokens) {
    throw new Error(`plain answer through the router differs: ${JSON.stringify(r)}`);
  }
  const events = (body: string) =>
    body.split("\n\n").filter((e) => e.startsWith("data:") || e.startsWith("event:")).length;
  const ds = events(await ask(direct, true));
  const rs = events(await ask(router, true));
  if (ds !== rs) throw new Error(`stream through the router has ${rs} events, directly ${ds}`);
}

/**
 * The tokens table for one upstream: `maitred serve` started in front of it as its own
 * process, the answers checked, both paths warmed, then per case the upstream directly and
 * through the router, the router's CPU and the upstream's counters read around the router run.
 */
export async function measureTokens(
  name: string,
  upstream: CountingUpstream,
  routerArgs: string[],
  load: TokenLoader,
  cases: TokenCase[],
  seconds: number,
  routerProfileDir: string | undefined,
): Promise<TokenRow[]> {
  const router: RouterProcess = await startServeProcess(
    ["--backends", upstream.url, ...routerArgs],
    { cpuProfileDir: routerProfileDir },
  );
  const relay = await startTcpRelay(upstream.url);
  const httpRelay = await startHttpRelay(upstream.url);
  /** CPU seconds of `p` and the upstream's counters over one load through it. */
  const measured = async (p: RouterProcess, c: TokenCase) => {
    const s0: UpstreamStats = await upstream.stats();
    const cpu0 = p.cpuSeconds();
    const result = await load({ kind: "tokens", url: p.url, ...c, seconds });
    const cpu = p.cpuSeconds() - cpu0;
    const s1 = await upstream.stats();
    const requests = s1.requests - s0.requests;
    if (requests !== result.n)
      throw new Error(
        `${name}: the upstream answered ${requests} requests, the client read ${result.n}`,
      );
    return { result, cpu, requests, events: s1.events - s0.events, writes: s1.writes - s0.writes };
  };
  try {
    const apis = [...new Set(cases.map((c) => c.api))];
    for (const api of apis) await checkAnswers(upstream.url, router.url, api);
    for (const url of [upstream.url, router.url, relay.url, httpRelay.url])
      for (const stream of [false, true])
        for (const api of apis)
          await load({ kind: "tokens", url, stream, api, tokens: 64, connections: 16, seconds: 1 });
    const rows: TokenRow[] = [];
    for (const [i, c] of cases.entries()) {
      progress(
        `  ${name} case ${i + 1}/${cases.length}: ${c.api} ${c.stream ? "streamed" : "plain"}, ${c.tokens} tokens, ${c.connections} connections`,
      );
      const direct = await load({ kind: "tokens", url: upstream.url, ...c, seconds });
      const via = await measured(router, c);
      const bare = await measured(relay, c);
      const http = await measured(httpRelay, c);
      rows.push({
        upstream: name,
        ...c,
        direct_rps: direct.n / direct.seconds,
        router_rps: via.result.n / via.result.seconds,
        router_cpu_s: via.cpu,
        router_seconds: via.result.seconds,
        requests: via.requests,
        events: via.events,
        writes: via.writes,
        cpu_us_per_request: (via.cpu / via.requests) * 1e6,
        cpu_us_per_event: via.events > 0 ? (via.cpu / via.events) * 1e6 : null,
        relay_cpu_us_per_request: (bare.cpu / bare.requests) * 1e6,
        relay_cpu_us_per_event: bare.events > 0 ? (bare.cpu / bare.events) * 1e6 : null,
        relay_events_per_request: bare.events / bare.requests,
        http_relay_cpu_us_per_request: (http.cpu / http.requests) * 1e6,
        http_relay_cpu_us_per_event: http.events > 0 ? (http.cpu / http.events) * 1e6 : null,
        http_relay_events_per_request: http.events / http.requests,
      });
    }
    return rows;
  } finally {
    await router.close();
    await relay.close();
    await httpRelay.close();
  }
}

export function tokensTable(rows: TokenRow[]): string {
  return markdownTable(
    [
      "upstream",
      "api",
      "client",
      "tokens",
      "connections",
      "direct req/s",
      "maitred req/s",
      "÷ direct",
      "**router CPU µs/request**",
      "**router CPU µs/event**",
      "TCP relay µs/request",
      "TCP relay µs/event",
      "HTTP relay µs/request",
      "HTTP relay µs/event",
      "events/request",
      "upstream writes/request",
      "router CPU busy",
    ],
    rows.map((r) => [
      `\`${r.upstream}\``,
      r.api,
      r.stream ? "streamed" : "plain",
      String(r.tokens),
      String(r.connections),
      grouped(r.direct_rps),
      grouped(r.router_rps),
      `${(r.router_rps / r.direct_rps).toFixed(2)}×`,
      `**${grouped(r.cpu_us_per_request, 1)}**`,
      r.cpu_us_per_event === null ? "–" : `**${r.cpu_us_per_event.toFixed(2)}**`,
      grouped(r.relay_cpu_us_per_request, 1),
      r.relay_cpu_us_per_event === null ? "–" : r.relay_cpu_us_per_event.toFixed(2),
      grouped(r.http_relay_cpu_us_per_request, 1),
      r.http_relay_cpu_us_per_event === null ? "–" : r.http_relay_cpu_us_per_event.toFixed(2),
      (r.events / r.requests).toFixed(0),
      (r.writes / r.requests).toFixed(0),
      `${Math.round((r.router_cpu_s / r.router_seconds) * 100)} %`,
    ]),
    3,
  );
}

/**
 * What one more token costs the router, per upstream and client kind: the CPU per request at
 * 512 tokens less that at 64, over the 448 events between; the per-request costs (parsing the
 * request, the scheduler, the access line) cancel out.
 */
export function marginalLines(rows: TokenRow[]): string {
  const out: string[] = [];
  for (const upstream of new Set(rows.map((r) => r.upstream)))
    for (const api of new Set(rows.map((r) => r.api))) {
      const parts: string[] = [];
      for (const stream of [false, true]) {
        const at = (tokens: number) =>
          rows.find(
            (r) =>
              r.upstream === upstream &&
              r.api === api &&
              r.stream === stream &&
              r.tokens === tokens,
          );
        const a = at(64);
        const b = at(512);
        if (!a || !b) continue;
        const between = b.events / b.requests - a.events / a.requests;
        const perEvent = (b.cpu_us_per_request - a.cpu_us_per_request) / between;
        parts.push(`${stream ? "streamed" : "plain"} **${perEvent.toFixed(2)} µs**`);
        // A plain answer passes the relay as one body, so only its streams say what an event costs.
        if (stream) {
          const bare =
            (b.relay_cpu_us_per_request - a.relay_cpu_us_per_request) /
            (b.relay_events_per_request - a.relay_events_per_request);
          const http =
            (b.http_relay_cpu_us_per_request - a.http_relay_cpu_us_per_request) /
            (b.http_relay_events_per_request - a.http_relay_events_per_request);
          parts.push(
            `the bare TCP relay streamed ${bare.toFixed(2)} µs, the bare HTTP relay ${http.toFixed(2)} µs`,
          );
        }
      }
      if (parts.length > 0) out.push(`- \`${upstream}\`, ${api}: ${parts.join(", ")}`);
    }
  return out.length === 0
    ? ""
    : `Router CPU per additional event (512 tokens less 64, per event between):\n${out.join("\n")}`;
}
