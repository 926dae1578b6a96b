import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cellsFigures } from "../../../src/bench/cells/figures.ts";
import { cpuLines, headerLines, phaseLines } from "../../../src/bench/cells/run-report.ts";
import { fixtureRun, SETTINGS } from "./fixture.ts";

const run = fixtureRun();
const f = cellsFigures(run);

describe("headerLines", () => {
  it("says what ran, when HAProxy saw the change, and the hash's balance", () => {
    const [what, seen, balance] = headerLines(run, f);
    assert.match(what, /4 programs of deepseek \(seed 1\), 50 % streamed/);
    assert.match(what, /Warmup 1\.0 s, then stable, dead, back 2\.0 s each/);
    assert.doesNotMatch(what, /--haproxy-no-trim/);
    assert.match(seen, /cell-b DOWN 400 ms after the kill; /);
    assert.match(seen, /ready 500 ms after the restart began, logged UP 1000 ms after it/);
    assert.match(seen, /ran 1\.0 ms ahead .* before the load, 0\.5 ms after it/);
    assert.match(balance, /cell-a 1, cell-b 4, cell-c 1 of 6 launched/);
    assert.match(balance, /of 6 ids: cell-a 16\.7 %, cell-b 66\.7 %, cell-c 16\.7 %/);
    assert.match(balance, /agrees with the run's log on 5 of 5 programs/);
  });

  it("names heap trimming off, and a change HAProxy never logged", () => {
    const r = fixtureRun({ settings: { ...SETTINGS, haproxyNoTrim: true }, hapEvents: [] });
    const [what, seen] = headerLines(r, cellsFigures(r));
    assert.match(what, /glibc's heap trimming off \(--haproxy-no-trim\)\.$/);
    assert.match(seen, /DOWN never \(3 checks assumed\).*UP never \(3 checks assumed\)/);
  });
});

describe("phaseLines", () => {
  it("a row per phase and the drain, the failures by kind, and what the kill cost", () => {
    const lines = phaseLines(run, f);
    const table = lines[2].split("\n");
    assert.equal(table.length, 2 + 5, "header, rule, four phases and the drain");
    assert.match(table[3], /^stable\s+2\.0 s\s+7\s+5\s+150\.0\s+0\s+0\s+0\s+1$/);
    assert.match(table[6], /^after the end\s+drain\s+0\s+-\s+-\s+0\s+0\s+0\s+0$/);
    assert.match(lines[3], /^requests in flight when the run ended: 0; 0 answered, 0 failed/);
    assert.equal(
      lines[4],
      "  failed: 1 × transport_UND_ERR_SOCKET (stream, after its first token; HAProxy: cell-b 200 SD--)",
    );
    assert.match(
      lines[5],
      /^at the kill 2 requests were in flight, 2 of them on cell-b \(1 streamed\): 1 failed, 1 answered by another cell .*Failures of any other request: 0\.$/,
    );
  });
});

describe("cpuLines", () => {
  it("gives each part's share of one CPU per phase and HAProxy's CPU per request", () => {
    const table = cpuLines(run, f)[2].split("\n");
    // Warmup, 1 s: each part 0.1 s (10 %), HAProxy 0.01 s for one request; the 2 CPUs half
    // busy, 1 CPU-second, of which 0.31 s ours: the rest 69 %.
    assert.match(table[2], /^warmup\s+50\s+10\.0\s+10\.0\s+1\.0\s+10\.0\s+69\.0\s+1\s+10\.000$/);
    // Stable, 2 s: 7 requests; 2 CPU-seconds busy less our 0.31 s over 2 s.
    assert.match(table[3], /^stable\s+50\s+5\.0\s+5\.0\s+0\.5\s+5\.0\s+84\.5\s+7\s+1\.429$/);
  });
});
