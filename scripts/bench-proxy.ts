/**
 * `bench:proxy`: maitred's proxy overhead on loopback, against a direct connection to the same
 * upstream in one run: router CPU per request and per SSE event by answer length, beside bare
 * TCP and HTTP relays (the tokens phase), then latency, throughput, SSE and large-body phases
 * with the router in this process. The run is src/bench/overhead/proxy-bench.ts.
 *
 *   node scripts/bench-proxy.ts [--seconds 5] [--requests 5000] [--connections 64]
 *     [--token-seconds 4] [--token-connections 16] [--upstreams vllm,vllm-one-write,fast]
 *     [--token-cases plain:4:64,streamed:512:16,…] [--apis chat,messages,responses]
 *     [--phases tokens,latency,throughput,sse,body] [--json out.json] …   (see --help)
 */
import { writeFileSync } from "node:fs";
import { runProxyBench } from "../src/bench/overhead/proxy-bench.ts";
import { BENCH_PROXY_SPEC, proxyBenchPlan } from "../src/bench/overhead/proxy-bench-plan.ts";
import { ScriptArgsError } from "../src/bench/script-args.ts";
import { flagError, scriptArgs } from "../src/bench/script-entry.ts";

const args = scriptArgs(BENCH_PROXY_SPEC);
const plan = (() => {
  try {
    const date = new Date().toISOString().slice(0, 10);
    return proxyBenchPlan(args, { argv: process.argv.slice(2), date });
  } catch (err) {
    if (err instanceof ScriptArgsError) flagError(BENCH_PROXY_SPEC, err.message);
    throw err;
  }
})();
const summary = await runProxyBench(plan, (text) => console.log(text));
if (args.values.json) writeFileSync(args.values.json, `${JSON.stringify(summary, null, 2)}\n`);
