import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { readyBanner } from "../../src/cli/serve-banner.ts";
import { type SimBackend, startSimBackend } from "../../src/sim-server/start-sim-backend.ts";
import { silentLogger } from "../../src/util/logger.ts";

describe("serve ready banner", () => {
  let sim: SimBackend;
  before(async () => {
    sim = await startSimBackend({ port: 0, logger: silentLogger, model: "banner-model" });
  });
  after(() => sim.close());

  it("names the URL and a curl request with the served model", async () => {
    const text = await readyBanner(sim.url);
    assert.match(text, new RegExp(`serving on ${sim.url}`));
    assert.match(text, /"model":"banner-model"/, `got:\n${text}\nwant the model from /v1/models`);
    assert.match(text, /curl -s .*\/v1\/chat\/completions/);
  });

  it("falls back to a placeholder model when the URL answers no model list", async () => {
    const text = await readyBanner("http://127.0.0.1:9");
    assert.match(text, /"model":"<model>"/);
  });
});
