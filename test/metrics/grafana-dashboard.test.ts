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
