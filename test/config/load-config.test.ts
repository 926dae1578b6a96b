import assert from "node:assert/strict";
import { test } from "node:test";
import { envTwin, resolveRouterConfig } from "../../src/config/load-config.ts";
import { DEFAULT_CONFIG } from "../../src/config/router-config.ts";
import { ConfigError } from "../../src/errors.ts";

const files = (docs: Record<string, string>) => (path: string) => {
  const text = docs[path];
  if (text === undefined) throw new Error(`ENOENT: ${path}`);
  return text;
};

function configErrorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `want ConfigError, got ${String(err)}`);
    return err;
  }
  assert.fail("want a ConfigError, got none");
}

test("with no inputs the config is the built-in defaults (ThunderAgent's, pauses bounded at 900 s)", () => {
  const c = resolveRouterConfig();
  assert.equal(c.host, "0.0.0.0");
  assert.equal(c.port, 8300);
  assert.deepEqual(c.backends, ["http://localhost:8000"]);
  assert.equal(c.router, "tr");
  assert.equal(c.backendType, "vllm");
  assert.equal(c.schedulerIntervalMs, 5000);
  assert.equal(c.metricsIntervalMs, 5000);
  assert.equal(c.actingTokenWeight, 1);
  assert.equal(c.tail, "bounded");
  assert.deepEqual(
    [c.ageingMs, c.maxPauseMs],
    [240_000, 300_000],
    "bounded: inside the SDKs' 600 s",
  );
  assert.equal(c.maxBodySize, 32 * 1024 * 1024);
  assert.equal(c.profile, false);
});

test("flags win over environment twins, which win over the YAML file", () => {
  const c = resolveRouterConfig({
    configFile: "/etc/maitred.yaml",
    readFile: files({
      "/etc/maitred.yaml": "port: 9000\nrouter: default\nscheduler-interval: 2\nlog-level: warn\n",
    }),
    env: { MAITRED_PORT: "9100", MAITRED_ROUTER: "tr" },
    flags: { port: "9200" },
  });
  assert.equal(c.port, 9200, "flag beats env and file");
  assert.equal(c.router, "tr", "env beats file");
  assert.equal(c.schedulerIntervalMs, 2000, "file beats default");
  assert.equal(c.logLevel, "warn");
});

test("the config file path can come from --config or MAITRED_CONFIG", () => {
  const readFile = files({ "/a.yaml": "port: 1111\n", "/b.yaml": "port: 2222\n" });
  assert.equal(resolveRouterConfig({ env: { MAITRED_CONFIG: "/a.yaml" }, readFile }).port, 1111);
  assert.equal(
    resolveRouterConfig({
      env: { MAITRED_CONFIG: "/a.yaml" },
      flags: { config: "/b.yaml" },
      readFile,
    }).port,
    2222,
  );
});

test("every environment twin is MAITRED_ plus the flag name in upper snake case", () => {
  assert.equal(envTwin("scheduler-interval"), "MAITRED_SCHEDULER_INTERVAL");
  const c = resolveRouterConfig({
    env: {
      MAITRED_USE_ACTING_TOKEN_DECAY: "true",
      MAITRED_ACTING_TOKEN_WEIGHT: "0.1",
      MAITRED_PLACEMENT: "worst-fit",
      MAITRED_MAX_BODY_SIZE: "1MiB",
      MAITRED_IDLE_TIMEOUT: "90s",
      MAITRED_BACKENDS: "http://a:1/, http://b:2",
    },
  });
  assert.equal(c.useActingTokenDecay, true);
  assert.equal(c.actingTokenWeight, 0.1);
  assert.equal(c.placement, "worst-fit");
  assert.equal(c.maxBodySize, 1024 * 1024);
  assert.equal(c.idleTimeoutMs, 90_000);
  assert.deepEqual(c.backends, ["http://a:1", "http://b:2"], "trimmed, trailing slash removed");
});

test("durations accept ms/s/m/h suffixes and bare seconds", () => {
  const c = resolveRouterConfig({
    flags: { "scheduler-interval": "250ms", "max-pause": "2m", "metrics-interval": "1.5" },
  });
  assert.equal(c.schedulerIntervalMs, 250);
  assert.equal(c.maxPauseMs, 120_000);
  assert.equal(c.metricsIntervalMs, 1500);
});

test("--backends sim:N asks for N simulated backends and no URLs", () => {
  const c = resolveRouterConfig({ flags: { backends: "sim:3" } });
  assert.equal(c.simBackends, 3);
  assert.deepEqual(c.backends, []);
});

test("a bad environment value names the field and the variable", () => {
  const err = configErrorOf(() => resolveRouterConfig({ env: { MAITRED_PORT: "eighty" } }));
  assert.equal(err.field, "port");
  assert.match(err.message, /MAITRED_PORT/);
});

test("a bad flag names the field and the flag", () => {
  const err = configErrorOf(() => resolveRouterConfig({ flags: { router: "fastest" } }));
  assert.equal(err.field, "router");
  assert.match(err.message, /--router/);
  assert.match(err.message, /tr, default/);
});

test("each invalid setting is reported under its own field", () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ port: "70000" }, "port"],
    [{ "scheduler-interval": "0" }, "scheduler-interval"],
    [{ "acting-token-weight": "-1" }, "acting-token-weight"],
    [{ "max-body-size": "lots" }, "max-body-size"],
    [{ backends: "ftp://x" }, "backends"],
    [{ backends: "http://a,http://a/" }, "backends"],
    [{ backends: "sim:0" }, "backends"],
    [{ "identity-order": "program_id,cookie" }, "identity-order"],
    [{ "log-level": "loud" }, "log-level"],
    [{ placement: "first-fit" }, "placement"],
  ];
  for (const [flags, field] of cases) {
    const err = configErrorOf(() => resolveRouterConfig({ flags }));
    assert.equal(
      err.field,
      field,
      `flags ${JSON.stringify(flags)}: got field ${err.field}, want ${field}`,
    );
  }
});

test("an unknown key in the YAML file names the key", () => {
  const err = configErrorOf(() =>
    resolveRouterConfig({ configFile: "/c.yaml", readFile: files({ "/c.yaml": "prot: 1\n" }) }),
  );
  assert.equal(err.field, "prot");
  assert.match(err.message, /unknown setting/);
});

test("an unreadable or malformed YAML file is a config error on field config", () => {
  assert.equal(
    configErrorOf(() => resolveRouterConfig({ configFile: "/missing.yaml", readFile: files({}) }))
      .field,
    "config",
  );
  assert.equal(
    configErrorOf(() =>
      resolveRouterConfig({ configFile: "/bad.yaml", readFile: files({ "/bad.yaml": "a: [1" }) }),
    ).field,
    "config",
  );
  assert.equal(
    configErrorOf(() =>
      resolveRouterConfig({ configFile: "/list.yaml", readFile: files({ "/list.yaml": "- 1\n" }) }),
    ).field,
    "config",
  );
});

test("YAML takes typed values, lists and the file-only sim block", () => {
  const c = resolveRouterConfig({
    configFile: "/c.yaml",
    readFile: files({
      "/c.yaml": "profile: true\nbackends: [http://x:1, http://y:2]\nsim:\n  num-gpu-blocks: 64\n",
    }),
  });
  assert.equal(c.profile, true);
  assert.deepEqual(c.backends, ["http://x:1", "http://y:2"]);
  assert.deepEqual(c.sim, { numGpuBlocks: 64 }, "keyed as the simulated backend takes them");
  assert.deepEqual(DEFAULT_CONFIG.sim, {}, "defaults are not mutated");
});

test("the sim block must be a mapping", () => {
  const err = configErrorOf(() =>
    resolveRouterConfig({ configFile: "/c.yaml", readFile: files({ "/c.yaml": "sim: 3\n" }) }),
  );
  assert.equal(err.field, "sim");
});

test("the commented example in config/ is a valid configuration", () => {
  const path = new URL("../../config/maitred.example.yaml", import.meta.url).pathname;
  const c = resolveRouterConfig({ configFile: path });
  assert.equal(c.port, 8300);
  assert.equal(c.router, "tr");
  assert.deepEqual(c.backends, ["http://localhost:8000"]);
  assert.equal(c.sim.numGpuBlocks, 2048);
});

test("headroom and ageing knobs reach the scheduler; ageing 0 turns it off", async () => {
  const { schedulerConfigOf } = await import("../../src/config/scheduler-settings.ts");
  const c = resolveRouterConfig({
    flags: { "growth-headroom-steps": "0", ageing: "0" },
    env: { MAITRED_BUFFER_PER_PROGRAM: "250" },
  });
  const s = schedulerConfigOf(c);
  assert.equal(s.growthHeadroomSteps, 0, "0 steps = ThunderAgent's flat buffer");
  assert.equal(s.ageingMs, 0);
  assert.equal(s.bufferPerProgram, 250);
  const d = schedulerConfigOf(resolveRouterConfig());
  assert.equal(d.ageingMs, DEFAULT_CONFIG.ageingMs);
  assert.equal(d.growthHeadroomSteps, DEFAULT_CONFIG.growthHeadroomSteps);
  assert.equal(
    configErrorOf(() => resolveRouterConfig({ flags: { ageing: "-5" } })).field,
    "ageing",
  );
});
