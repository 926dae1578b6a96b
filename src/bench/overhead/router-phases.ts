/**
 * `bench:proxy`'s phases with the router in this process's main thread, against the fast
 * upstream (its CPU read from that thread, which does nothing else): latency (sequential small
 * plain requests), throughput (small plain requests from many keep-alive connections), SSE
 * (streams of many small chunks) and body (a large agent body forwarded as it is, then one
 * maitred must change). The first three alternate the upstream directly and the router.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { resolveRouterConfig } from "../../config/load-config.ts";
import { startRouter } from "../../service/service.ts";
import { silentLogger } from "../../util/logger.ts";
import { progress } from "../script-entry.ts";
import type { LoadResult } from "./proxy-load.ts";
import type { LoadRequest } from "./proxy-workers.ts";

export type RouterPhase = "latency" | "throughput" | "sse" | "body";

/** Per path (`direct`, `router`), per phase (or `body_kept`, `body_changed`), what it counted. */
export type PhaseResults = Record<"direct" | "router", Record<string, LoadResult>>;

export interface RouterPhasesOptions {
  upstreamUrl: string;
  /** The router's --router and --upstream-stream. */
  router: string;
  upstreamStream: string;
  /** In the order they run. */
  phases: readonly RouterPhase[];
  load(cmd: LoadRequest): Promise<LoadResult>;
  /** A CPU profile of this thread while the router runs one phase, written to `file`. */
  cpuProfile?: { file: string; phase: string };
  /** How long each path is warmed before the phases (1 s unless said). */
  warmupSeconds?: number;
}

async function startProfile(): Promise<Session> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  return session;
}

async function stopProfile(session: Session, file: string): Promise<void> {
  const { profile } = await session.post("Profiler.stop");
  writeFileSync(file, JSON.stringify(profile));
  session.disconnect();
}

/** The router started here in front of the upstream, each phase run, the router stopped. */
export async function runRouterPhases(o: RouterPhasesOptions): Promise<PhaseResults> {
  const config = resolveRouterConfig({
    flags: {
      host: "127.0.0.1",
      port: "0",
      backends: o.upstreamUrl,
      router: o.router,
      "upstream-stream": o.upstreamStream,
      "log-level": "silent",
    },
  });
  const router = await startRouter(config, { logger: silentLogger });
  try {
    await router.ticker.runOnce();
    const targets = { direct: o.upstreamUrl, router: router.url };
    const results: PhaseResults = { direct: {}, router: {} };
    // Warm both paths (JIT, keep-alive pools) before measuring.
    for (const url of Object.values(targets))
      await o.load({ kind: "throughput", url, seconds: o.warmupSeconds ?? 1 });
    for (const kind of o.phases) {
      progress(`${kind} phase, router in this process`);
      if (kind === "body") {
        // Alternate the two bodies through the router so drift hits both alike.
        for (const round of [0, 1])
          for (const variant of ["kept", "changed"] as const) {
            const r = await o.load({ kind, url: router.url, variant });
            const key = `body_${variant}`;
            const prev = results.router[key];
            results.router[key] = round === 0 ? r : { ...r, p50_ms: (prev.p50_ms + r.p50_ms) / 2 };
          }
        continue;
      }
      for (const [name, url] of Object.entries(targets) as ["direct" | "router", string][]) {
        const profile =
          o.cpuProfile !== undefined && name === "router" && kind === o.cpuProfile.phase;
        const session = profile ? await startProfile() : null;
        // CPU of the router's own thread (main), independent of how busy the machine is.
        const cpu0 = process.threadCpuUsage();
        results[name][kind] = await o.load({ kind, url });
        const cpu = process.threadCpuUsage(cpu0);
        results[name][kind].router_cpu_s = (cpu.user + cpu.system) / 1e6;
        if (session) await stopProfile(session, (o.cpuProfile as { file: string }).file);
      }
    }
    return results;
  } finally {
    await router.close();
  }
}
