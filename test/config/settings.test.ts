import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { Ajv2020 } from "ajv/dist/2020.js";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import {
  BENCH_SETTINGS,
  COMMON_BENCH_SETTINGS,
  COMPARE_SETTINGS,
} from "../../src/bench/bench-options.ts";
import {
  checkConfigFile,
  configJsonSchema,
  resolveRouterConfig,
} from "../../src/config/load-config.ts";
import { ROUTER_SETTINGS } from "../../src/config/router-config.ts";
import { defaultOf, defaultShown, type Setting } from "../../src/config/setting.ts";
import { ConfigError } from "../../src/errors.ts";
import { resolveSimBackendOptions, SIM_SETTINGS } from "../../src/sim-server/options.ts";
import { SIMULATE_SETTINGS } from "../../src/simulate/simulate-options.ts";
import { runMaitred } from "../cli/run-maitred.ts";

const EXAMPLE = new URL("../../config/maitred.example.yaml", import.meta.url).pathname;

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `want a ConfigError, got ${String(err)}`);
    return err.message;
  }
  return assert.fail("want a ConfigError, got none");
}

const fromFile = (yaml: string) => () =>
  resolveRouterConfig({ configFile: "/c.yaml", readFile: () => yaml });

test("an error names the setting, what is wrong, the value and where it came from", () => {
  const cases: Array<[() => unknown, string]> = [
    [
      () => resolveRouterConfig({ flags: { port: "eighty" } }),
      'port: must be a number, got "eighty" (from --port)',
    ],
    [
      () => resolveRouterConfig({ env: { MAITRED_PORT: "70000" } }),
      'port: must be an integer between 0 and 65535, got "70000" (from MAITRED_PORT)',
    ],
    [
      () => resolveRouterConfig({ flags: { "scheduler-interval": "soon" } }),
      'scheduler-interval: must be a duration in seconds (or with ms/s/m/h), got "soon" (from --scheduler-interval)',
    ],
    [
      () => resolveRouterConfig({ flags: { "scheduler-interval": "0" } }),
      'scheduler-interval: must be > 0, got "0" (from --scheduler-interval)',
    ],
    [
      () => resolveRouterConfig({ flags: { "max-body-size": "lots" } }),
      'max-body-size: must be a byte size such as 32MiB, got "lots" (from --max-body-size)',
    ],
    [
      () => resolveRouterConfig({ flags: { router: "fastest" } }),
      'router: must be one of tr, default, got "fastest" (from --router)',
    ],
    [
      () => resolveRouterConfig({ flags: { "identity-order": "program_id,cookie" } }),
      'identity-order: unknown identity source "cookie"; known: program_id, extra_body, x-program-id, session-headers, metadata, previous_response_id, prompt_cache_key, nvext (from --identity-order)',
    ],
    [
      () => resolveRouterConfig({ flags: { backends: "http://a:1,ftp://b" } }),
      'backends: must be an http(s) URL, got "ftp://b" (from --backends)',
    ],
    [
      fromFile("priority:\n  classes:\n    bulk:\n      queue_depth: -1\n"),
      "priority.classes.bulk.queue_depth: must be an integer between 0 and 1000000, got -1 (from /c.yaml)",
    ],
    [
      fromFile("priority:\n  tenants:\n    acme: {}\n"),
      "priority.tenants.acme.max_class: must be one of system, interactive, default, bulk, but it is missing (from /c.yaml)",
    ],
    [
      fromFile("priority:\n  classes:\n    vip: {}\n"),
      "priority.classes.vip: unknown class; known: system, interactive, default, bulk (from /c.yaml)",
    ],
    [
      () => resolveSimBackendOptions({ failureCodes: "500,200" }),
      "failure-codes: must be an integer between 400 and 599, got 200 (from --failure-codes)",
    ],
    [
      () => resolveSimBackendOptions({ failureCodes: "500,abc" }),
      'failure-codes: must be a number, got "abc" (from --failure-codes)',
    ],
    [
      fromFile("priority: 5\n"),
      "priority: must be true/false or a mapping (the priority section), got 5 (from /c.yaml)",
    ],
  ];
  for (const [fn, want] of cases) assert.equal(messageOf(fn), want);
});

test("secrets are never echoed in an error", () => {
  const token = messageOf(() => resolveRouterConfig({ flags: { "admin-token": "hunter2 x" } }));
  assert.equal(
    token,
    "admin-token: must be at least 16 characters without spaces (from --admin-token)",
  );
  const keys = messageOf(
    fromFile(
      "priority:\n  tenants:\n    acme:\n      max_class: bulk\n      api_keys: [7777777]\n",
    ),
  );
  assert.match(keys, /^priority\.tenants\.acme\.api_keys: /);
  assert.doesNotMatch(keys, /7777777/);
  for (const yaml of [
    "priority:\n  tenants: [sk-live-1]\n",
    "priority:\n  tenants:\n    t: sk-live-1\n",
  ]) {
    const message = messageOf(fromFile(yaml));
    assert.match(message, /^priority\.tenants/);
    assert.doesNotMatch(message, /sk-live-1/, yaml);
  }
});

test("a token with surrounding blanks is read as its text; one a YAML file gives as a number is refused, not changed", () => {
  const token = "abcdefghijklmnopqrstuvwxyz";
  assert.equal(
    resolveRouterConfig({ env: { MAITRED_ADMIN_TOKEN: `${token}\n` } }).adminToken,
    token,
    "a token file's trailing newline is not part of it",
  );
  // 12345678901234567890 would read back as 12345678901234567000: nobody would hold that token.
  assert.equal(
    messageOf(fromFile("admin-token: 12345678901234567890\n")),
    "admin-token: must be at least 16 characters without spaces (quote it in a YAML file) (from /c.yaml)",
  );
  assert.equal(
    fromFile('admin-token: "12345678901234567890"\n')().adminToken,
    "12345678901234567890",
  );
  assert.deepEqual(fromFile("sim:\n")().sim, {}, "an empty sim: block is no settings");
  assert.deepEqual(
    resolveRouterConfig({ flags: { backends: "http://user:pw@a:1/" } }).backends,
    ["http://a:1"],
    "a backend is named without credentials: its name appears in /metrics labels and logs",
  );
  assert.deepEqual(
    fromFile("sim:\n  stream-error-after: ~\n  num-gpu-blocks: 300\n")().sim,
    { numGpuBlocks: 300 },
    "null leaves a simulated backend's setting at its default",
  );
});

test("every command's every default is read by its own setting's schema, and --help says it", () => {
  const tables: Record<string, readonly Setting[]> = {
    serve: ROUTER_SETTINGS,
    "sim-backend": SIM_SETTINGS,
    bench: [...Object.values(BENCH_SETTINGS), ...Object.values(COMMON_BENCH_SETTINGS)],
    "bench compare": Object.values(COMPARE_SETTINGS),
    simulate: Object.values(SIMULATE_SETTINGS),
  };
  for (const [command, settings] of Object.entries(tables)) {
    for (const s of settings) {
      assert.doesNotThrow(() => defaultOf(s), `${command} --${s.key}: its default is invalid`);
      if (s.default !== undefined && !s.negatable) {
        assert.ok(defaultShown(s), `${command} --${s.key} shows no default`);
      }
    }
  }
});

test("the config file's JSON Schema accepts the shipped example and flags misspelt or mistyped settings", () => {
  const validate = new Ajv2020({ strict: false }).compile(configJsonSchema());
  const example = parseYaml(readFileSync(EXAMPLE, "utf8"));
  assert.ok(validate(example), JSON.stringify(validate.errors));
  const bad: Array<[string, unknown]> = [
    ["a misspelt setting", { shedulr: 5 }],
    ["a port that is text", { port: "eighty" }],
    ["a router that does not exist", { router: "fastest" }],
    ["a class that does not exist", { priority: { classes: { vip: {} } } }],
    ["a misspelt simulated-backend setting", { sim: { "num-gpu-block": 100 } }],
    ["a duration with an unknown unit", { "max-pause": "5 days" }],
  ];
  for (const [what, doc] of bad) assert.equal(validate(doc), false, what);
});

test("the JSON Schema and the loader agree on what a file may hold", () => {
  const validate = new Ajv2020({ strict: false }).compile(configJsonSchema());
  const loads = (doc: unknown) => checkConfigFile("/c.yaml", () => stringifyYaml(doc)).length === 0;
  const docs: Array<[unknown, boolean]> = [
    [{ priority: true, backends: "sim:2", "max-pause": "5m" }, true],
    [{ port: "8301", profile: "yes", metrics: "off", priority: "on" }, true],
    [{ sim: { "num-gpu-blocks": "200", "enable-prefix-caching": "OFF", "block-size": 32 } }, true],
    [{ "max-body-size": "1.5 GiB", "identity-order": "nvext,program_id" }, true],
    [
      {
        priority: {
          classes: { bulk: { preempt: "yes", queue_timeout: "90s" } },
          age_weight: "0.5",
        },
      },
      true,
    ],
    [{ "admin-token": "1234567890123456" }, true],
    [{ "admin-token": 1234567890123456 }, false],
    [{ sim: null }, true],
    [{ sim: { "failure-codes": "500, 503" } }, true],
    [{ sim: { "failure-codes": [200] } }, false],
    [{ "identity-order": ["nvext", "nvext"] }, false],
    [{ "max-body-size": "1ki" }, false],
    [{ "scheduler-interval": 0 }, false],
    [{ "max-pause": -5 }, false],
    [{ sim: { "block-size": 12 } }, false],
    [{ priority: { tenants: { t: { max_class: "bulk", api_keys: [] } } } }, false],
    [{ backends: "" }, false],
    [{ "identity-order": ["nope"] }, false],
    [{ "admin-token": "short" }, false],
    [{ port: 70000 }, false],
  ];
  for (const [doc, ok] of docs) {
    assert.equal(loads(doc), ok, `loader on ${JSON.stringify(doc)}`);
    assert.equal(validate(doc), ok, `JSON Schema on ${JSON.stringify(doc)}`);
  }
  for (const s of ROUTER_SETTINGS) {
    const property = (configJsonSchema().properties as Record<string, { description?: string }>)[
      s.key
    ];
    assert.equal(property?.description, s.help, `${s.key} has its help as its description`);
  }
});

test("maitred config schema prints that JSON Schema", async () => {
  const r = await runMaitred(["config", "schema"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), configJsonSchema());
});

test("--engine-priority takes one polarity for every backend, or one per backend URL; --engine-order names an order", () => {
  const backends = "http://a:8000,http://b:8000";
  const of = (v: string) =>
    resolveRouterConfig({ flags: { backends, "engine-priority": v } }).enginePriority;
  assert.deepEqual(of("lower-first"), { all: "lower-first", byBackend: {} });
  assert.deepEqual(of("http://a:8000/=higher-first, http://b:8000=lower-first"), {
    all: null,
    byBackend: { "http://a:8000": "higher-first", "http://b:8000": "lower-first" },
  });
  assert.deepEqual(fromFile("engine-priority: higher-first\n")().enginePriority, {
    all: "higher-first",
    byBackend: {},
  });
  assert.match(
    messageOf(() => of("first")),
    /engine-priority: "first" is not lower-first or higher-first/,
  );
  assert.match(
    messageOf(() => of("http://a=lower-first,http://a=lower-first")),
    /names http:\/\/a twice/,
  );
  assert.equal(resolveRouterConfig({ flags: {} }).enginePriority, null);
  for (const key of ["engine-priority", "host-kv-tokens"]) {
    const value = key === "engine-priority" ? "http://b:8000=lower-first" : "http://b:8000=100";
    assert.match(
      messageOf(() => resolveRouterConfig({ flags: { backends: "http://a:8000", [key]: value } })),
      new RegExp(`${key}: names http://b:8000, which is not in --backends`),
    );
  }
  assert.equal(resolveRouterConfig({ flags: {} }).engineOrder, "auto");
  assert.equal(
    resolveRouterConfig({ flags: { "engine-order": "smallest" } }).engineOrder,
    "smallest",
  );
  assert.match(
    messageOf(() => resolveRouterConfig({ flags: { "engine-order": "fastest" } })),
    /engine-order/,
  );
});

test("--host-kv-tokens takes one size for every backend, or one per backend URL", () => {
  const backends = "http://a:8000,http://b:8000,http://a";
  const of = (v: string) =>
    resolveRouterConfig({ flags: { backends, "host-kv-tokens": v } }).hostKvTokens;
  assert.deepEqual(of("1638400"), { all: 1_638_400, byBackend: {} });
  assert.deepEqual(of("http://a:8000/=100, http://b:8000=200"), {
    all: null,
    byBackend: { "http://a:8000": 100, "http://b:8000": 200 },
  });
  assert.deepEqual(fromFile("host-kv-tokens: 5000\n")().hostKvTokens, { all: 5000, byBackend: {} });
  assert.match(
    messageOf(() => of("0")),
    /host-kv-tokens: "0" is not a whole number of tokens ≥ 1/,
  );
  assert.match(
    messageOf(() => of("http://a=1,http://a=2")),
    /names http:\/\/a twice/,
  );
  assert.match(
    messageOf(() => of("ftp://a=1")),
    /host-kv-tokens: "ftp:\/\/a=1"/,
  );
  assert.equal(resolveRouterConfig({ flags: {} }).hostKvTokens, null);
});
