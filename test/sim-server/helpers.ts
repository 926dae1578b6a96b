/**
 * Shared test helpers: start an in-process simulated backend, read SSE bodies, and wait on
 * driver events (never on elapsed time).
 */

import type { DriverEvent, EngineDriver } from "../../src/sim-server/engine-driver.ts";
import {
  type SimBackend,
  type StartSimBackendOptions,
  startSimBackend,
} from "../../src/sim-server/start-sim-backend.ts";

/** Fast enough that tests finish quickly; no assertion depends on timing. */
export const TEST_TIME_SCALE = 1000;
export const TEST_MODEL = "sim-model";

export function startTestBackend(options: StartSimBackendOptions = {}): Promise<SimBackend> {
  return startSimBackend({
    port: 0,
    model: TEST_MODEL,
    numGpuBlocks: 4096,
    maxModelLen: 8192,
    timeScale: TEST_TIME_SCALE,
    ...options,
  });
}

export function postJson(
  url: string,
  body: unknown,
  init: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: init.signal,
  });
}

/** The `data:` payloads of an SSE body, in order ("[DONE]" included as a string). */
export function sseData(text: string): string[] {
  const events = text.split("\n\n").filter((e) => e !== "");
  return events.map((e) => {
    if (!e.startsWith("data: ")) throw new Error(`not a data event: ${JSON.stringify(e)}`);
    return e.slice("data: ".length);
  });
}

/** Resolves with the first driver event matching `predicate` (checked after each event). */
export function waitForEvent(
  driver: EngineDriver,
  predicate: (event: DriverEvent) => boolean,
): Promise<DriverEvent> {
  return new Promise((resolve) => {
    const off = driver.onEvent((event) => {
      if (predicate(event)) {
        off();
        resolve(event);
      }
    });
  });
}

/** A metric sample's value from exposition text (labels given exactly as rendered). */
export function metricValue(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  if (line === undefined) throw new Error(`series ${series} not found`);
  return Number(line.slice(series.length + 1));
}

export function userMessages(content: string): Array<{ role: string; content: string }> {
  return [{ role: "user", content }];
}

/** Response bodies are inspected field by field in tests, so they stay loosely typed. */
// biome-ignore lint/suspicious/noExplicitAny: dynamic JSON under test
export type Json = any;

export function readJson(res: Response): Promise<Json> {
  return res.json() as Promise<Json>;
}
