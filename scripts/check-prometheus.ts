/**
 * Does the Grafana dashboard show something? Prometheus scrapes `maitred serve --priority`
 * under an agent workload; every panel's queries must return data and promtool must pass
 * /metrics (src/bench/checks/prometheus-check.ts). Needs `prometheus` and `promtool` on PATH.
 */
import { PROMETHEUS_SPEC, runPrometheusCheck } from "../src/bench/checks/prometheus-check.ts";
import { scriptArgs } from "../src/bench/script-entry.ts";

const { values, parsed } = scriptArgs(PROMETHEUS_SPEC);
const durationMs = parsed.duration;
const concurrency = Number(values.concurrency);
process.exitCode = (await runPrometheusCheck({ durationMs, concurrency })) ? 0 : 1;
