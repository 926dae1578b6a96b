import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { startTestRouter } from "../integration/helpers/test-router.ts";

interface Dashboard {
  panels: { title: string; targets: { expr: string }[] }[];
}

const dashboard = JSON.parse(
  readFileSync(new URL("../../config/grafana/maitred-dashboard.json", import.meta.url), "utf8"),
) as Dashboard;

test("every series the Grafana dashboard queries is one the router exports, with priorities on", async () => {
  const router = await startTestRouter({ backends: "sim:1", priority: true });
  try {
    const text = await (await fetch(`${router.url}/metrics`)).text();
    const families = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] as string));
    assert.ok(dashboard.panels.length >= 10);
    for (const panel of dashboard.panels) {
      assert.ok(panel.targets.length > 0, panel.title);
      for (const { expr } of panel.targets) {
        const names = [...expr.matchAll(/\bmaitred_[a-z_]+/g)].map((m) => m[0]);
        assert.ok(names.length > 0, `${panel.title}: ${expr}`);
        for (const name of names) {
          const family = name.replace(/_(bucket|count|sum)$/, "");
          assert.ok(families.has(family), `${panel.title}: ${name} is not exported`);
        }
      }
    }
  } finally {
    await router.close();
  }
});

test("/metrics keeps Prometheus's conventions as it grows: HELP on every family, counters end in _total, durations in _seconds, only bounded labels", async () => {
  // The shadow's series too: they exist only with --shadow.
  const router = await startTestRouter({ backends: "sim:1", priority: true, shadow: true });
  try {
    const text = await (await fetch(`${router.url}/metrics`)).text();
    const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]));
    const helps = new Set([...text.matchAll(/^# HELP (\S+) \S/gm)].map((m) => m[1]));
    const bounded = new Set([
      "backend",
      "cell",
      "class",
      "outcome",
      "kind",
      "endpoint",
      "stage",
      "status",
      "state",
      "end",
      "le",
    ]);
    assert.ok(types.size > 20);
    for (const [name, type] of types) {
      assert.ok(name.startsWith("maitred_"), name);
      assert.ok(helps.has(name), `${name} has HELP`);
      if (type === "counter") assert.ok(name.endsWith("_total"), `${name} is a counter`);
      else assert.ok(!name.endsWith("_total"), `${name} is a ${type}`);
      if (type === "histogram") assert.match(name, /_(seconds|tokens)$/, `${name}: base unit`);
    }
    for (const m of text.matchAll(/^maitred_\w+\{([^}]*)\}/gm))
      for (const pair of (m[1] as string).split(/,(?=\w+=)/)) {
        const label = pair.slice(0, pair.indexOf("="));
        assert.ok(bounded.has(label), `label ${label} in ${m[0]}`);
      }
  } finally {
    await router.close();
  }
});
