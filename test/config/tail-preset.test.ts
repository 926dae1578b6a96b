import assert from "node:assert/strict";
import { test } from "node:test";
import { resolveRouterConfig } from "../../src/config/load-config.ts";
import { schedulerConfigOf } from "../../src/config/scheduler-settings.ts";
import { describeBounds, TAIL_PRESETS } from "../../src/config/tail-preset.ts";
import { resolveTrKnobs } from "../../src/simulate/simulate-options.ts";

const bounds = (c: { ageingMs?: number; maxPauseMs?: number }) => [c.ageingMs, c.maxPauseMs];

test("each --tail preset sets both bounds; the core runs what the config says", () => {
  for (const [name, preset] of Object.entries(TAIL_PRESETS)) {
    const c = resolveRouterConfig({ flags: { tail: name } });
    assert.deepEqual(bounds(c), [preset.ageingMs, preset.maxPauseMs], name);
    assert.deepEqual(bounds(schedulerConfigOf(c)), bounds(c), `${name}: handed to the core`);
    assert.deepEqual(c.boundsOverridden, { ageing: false, maxPause: false, tierPacking: false });
    assert.equal(c.tierPacking, preset.tierPacking, name);
    assert.equal(schedulerConfigOf(c).tierPacking, preset.tierPacking, `${name}: to the core`);
  }
  assert.equal(resolveRouterConfig({ flags: { tail: "throughput" } }).tierPacking, "gpu");
  assert.equal(resolveRouterConfig({ flags: {} }).tierPacking, "rotate");
  assert.deepEqual(bounds(resolveRouterConfig({ flags: { tail: "throughput" } })), [0, 1_800_000]);
});

test("an explicit --ageing or --max-pause overrides only its half of the preset, from any layer", () => {
  const flag = resolveRouterConfig({ flags: { tail: "throughput", ageing: "100" } });
  assert.deepEqual(bounds(flag), [100_000, 1_800_000]);
  assert.deepEqual(flag.boundsOverridden, { ageing: true, maxPause: false, tierPacking: false });
  // The preset from the file, one half from the environment: the environment's half wins.
  const layered = resolveRouterConfig({
    configFile: "/etc/maitred.yaml",
    readFile: () => "tail: balanced\n",
    env: { MAITRED_MAX_PAUSE: "450" },
  });
  assert.deepEqual(bounds(layered), [600_000, 450_000]);
  // A half given in a lower layer (file) gives way to a preset given in a higher one (flag).
  const below = resolveRouterConfig({
    configFile: "/etc/maitred.yaml",
    readFile: () => "ageing: 30\n",
    flags: { tail: "throughput" },
  });
  assert.deepEqual(bounds(below), [0, 1_800_000]);
  assert.deepEqual(below.boundsOverridden, {
    ageing: false,
    maxPause: false,
    tierPacking: false,
  });
  // In the same layer as the preset, or above it, the half wins.
  const same = resolveRouterConfig({
    configFile: "/etc/maitred.yaml",
    readFile: () => "tail: throughput\nageing: 30\n",
  });
  assert.deepEqual(bounds(same), [30_000, 1_800_000]);
  assert.equal(
    describeBounds(same),
    "--tail throughput (ageing 30 s given, max pause 1800 s, tier packing gpu)",
  );
});

test("--tier-packing overrides the preset's packing like a bound, and is named when given", () => {
  const packed = resolveRouterConfig({ flags: { tail: "bounded", "tier-packing": "gpu" } });
  assert.equal(packed.tierPacking, "gpu");
  assert.equal(
    describeBounds(packed),
    "--tail bounded (ageing 240 s, max pause 300 s, tier packing gpu given)",
  );
  const rotating = resolveRouterConfig({
    flags: { tail: "throughput" },
    env: { MAITRED_TIER_PACKING: "rotate" },
  });
  assert.equal(rotating.tierPacking, "gpu", "an environment half gives way to a preset flag");
  assert.equal(
    resolveRouterConfig({ flags: { tail: "throughput", "tier-packing": "rotate" } }).tierPacking,
    "rotate",
  );
  assert.equal(
    describeBounds(resolveRouterConfig({ flags: {} })),
    "--tail bounded (ageing 240 s, max pause 300 s)",
  );
  assert.throws(
    () => resolveRouterConfig({ flags: { "tier-packing": "tier" } }),
    (err: Error & { field?: string }) => err.field === "tier-packing",
  );
  assert.equal(resolveTrKnobs({ tail: "throughput" }).knobs.tierPacking, "gpu");
});

test("MAITRED_TAIL picks the preset; a bad name is refused naming the setting", () => {
  assert.deepEqual(
    bounds(resolveRouterConfig({ env: { MAITRED_TAIL: "balanced" } })),
    [600_000, 900_000],
  );
  assert.throws(
    () => resolveRouterConfig({ flags: { tail: "fast" } }),
    (err: Error & { field?: string }) => err.field === "tail",
  );
});

test("simulate reads the bounds by the same rule as serve", () => {
  assert.deepEqual(bounds(resolveTrKnobs({}).knobs), [240_000, 300_000]);
  assert.deepEqual(bounds(resolveTrKnobs({ tail: "throughput" }).knobs), [0, 1_800_000]);
  assert.deepEqual(
    bounds(resolveTrKnobs({ tail: "balanced", maxPause: "1200" }).knobs),
    [600_000, 1_200_000],
  );
});
