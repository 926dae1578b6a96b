import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import {
  type Panel,
  panelRows,
  promtoolVerdict,
} from "../../../src/bench/checks/prometheus-check.ts";

describe("check:prometheus's report", () => {
  it("counts each panel's series with a value over all its queries; a panel with none fails the check", async () => {
    const answers: Record<string, number[]> = {
      a: [1, Number.NaN],
      b: [2, 3],
      c: [Number.NaN],
      d: [],
    };
    const panels: Panel[] = [
      { title: "A and B", targets: [{ expr: "a" }, { expr: "b" }] },
      { title: "C and D", targets: [{ expr: "c" }, { expr: "d" }] },
    ];
    const asked: string[] = [];
    const { rows, empty } = await panelRows(panels, async (e) => {
      asked.push(e);
      return answers[e];
    });
    assert.deepEqual(rows, [
      ["A and B", "3"],
      ["C and D", "**none**"],
    ]);
    assert.equal(empty, true);
    assert.deepEqual(asked, ["a", "b", "c", "d"]);
    assert.equal((await panelRows(panels.slice(0, 1), async (e) => answers[e])).empty, false);
  });

  it("promtool passes /metrics only when it exits 0 and says nothing", () => {
    assert.deepEqual(promtoolVerdict(0, ""), {
      clean: true,
      line: "promtool check metrics: clean",
    });
    assert.deepEqual(promtoolVerdict(0, "x_total: counter metrics should have _total suffix"), {
      clean: false,
      line: "promtool check metrics: exit 0: x_total: counter metrics should have _total suffix",
    });
    assert.equal(promtoolVerdict(1, "bad").clean, false);
  });

  it("every panel of the shipped dashboard has a query to ask", () => {
    const url = new URL("../../../config/grafana/maitred-dashboard.json", import.meta.url);
    const { panels } = JSON.parse(readFileSync(url, "utf8")) as { panels: Panel[] };
    assert.ok(panels.length > 0);
    for (const p of panels)
      assert.ok(p.targets.length > 0 && p.targets.every((t) => t.expr), p.title);
  });
});
