/**
 * `bench:proxy`: maitred's proxy overhead on loopback, measured side by side against a direct
 * connection to the same upstream in one run. First the tokens phase (proxy-tokens.ts): the
 * router as users run it, in its own process, in front of each upstream (the vLLM-like one as a
 * process, one event per write or each answer in one write, and the fast one in a worker
 * thread), beside the bare TCP and HTTP relays; then the phases with the router in this
 * process (router-phases.ts). The load always runs in a worker thread of its own.
 */

import { progress } from "../script-entry.ts";
import { type CountingUpstream, forkVllmLike } from "./proxy-bench-kit.ts";
import type { ProxyBenchPlan, TokensPlan, TokensUpstream } from "./proxy-bench-plan.ts";
import { phasesReport, tokensPreamble } from "./proxy-report.ts";
import { marginalLines, measureTokens, type TokenRow, tokensTable } from "./proxy-tokens.ts";
import { type ProxyWorkers, startProxyWorkers } from "./proxy-workers.ts";

/** Each upstream in turn: the router, the relays and the loads against it; every row. */
async function tokensPhase(t: TokensPlan, workers: ProxyWorkers): Promise<TokenRow[]> {
  const starts: Record<TokensUpstream, () => Promise<CountingUpstream>> = {
    vllm: () => forkVllmLike(["--interval-ms", t.intervalMs]),
    "vllm-one-write": () => forkVllmLike(["--interval-ms", t.intervalMs, "--writes", "one"]),
    fast: async () => workers.fast,
  };
  const rows: TokenRow[] = [];
  for (const [i, name] of t.upstreams.entries()) {
    progress(`tokens phase, upstream ${i + 1}/${t.upstreams.length}: ${name}`);
    const upstream = await starts[name]();
    try {
      rows.push(
        ...(await measureTokens(
          name,
          upstream,
          t.routerArgs,
          workers.load,
          t.cases,
          t.seconds,
          t.profileDir,
        )),
      );
    } finally {
      await upstream.close();
    }
  }
  return rows;
}

/** The whole run, its text handed to `print` as each part ends; the figures, as the JSON has them. */
export async function runProxyBench(
  plan: ProxyBenchPlan,
  print: (text: string) => void,
): Promise<Record<string, unknown>> {
  const { requests, seconds, connections } = plan;
  const summary: Record<string, unknown> = { mode: plan.router, connections, seconds, requests };
  const workers = await startProxyWorkers({ requests, seconds, connections });
  try {
    if (plan.tokens !== null) {
      const t = plan.tokens;
      const rows = await tokensPhase(t, workers);
      summary.tokens = rows;
      const profiled = t.profileDir !== undefined;
      for (const line of tokensPreamble({ ...t, profiled })) print(line);
      print("");
      print(`${tokensTable(rows)}\n`);
      print(`${marginalLines(rows)}\n`);
    }
    if (plan.routerPhases.length === 0) return summary;
    // Loaded only when it runs: it starts a router, whose modules `--help` need not load.
    const { runRouterPhases } = await import("./router-phases.ts");
    const results = await runRouterPhases({
      upstreamUrl: workers.fast.url,
      router: plan.router,
      upstreamStream: plan.upstreamStream,
      phases: plan.routerPhases,
      load: workers.load,
      cpuProfile: plan.cpuProfile,
    });
    const report = phasesReport(results, plan);
    for (const line of report.lines) print(line);
    return Object.assign(summary, report.summary);
  } finally {
    await workers.close();
  }
}
