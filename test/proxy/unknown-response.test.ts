import assert from "node:assert/strict";
import type { IncomingHttpHeaders } from "node:http";
import { test } from "node:test";
import { replayUnknownResponse, unknownResponseAnswer } from "../../src/proxy/unknown-response.ts";
import type { UpstreamSink } from "../../src/proxy/upstream-call.ts";
import { startTestBackend } from "../sim-server/helpers.ts";

function recordingSink() {
  const calls: string[] = [];
  let status = 0;
  let headers: IncomingHttpHeaders = {};
  const body: Buffer[] = [];
  let error: Error | null = null;
  let ended!: () => void;
  const done = new Promise<void>((r) => {
    ended = r;
  });
  const sink: UpstreamSink = {
    onStart(s, h) {
      calls.push("start");
      status = s;
      headers = h;
    },
    onData(chunk) {
      calls.push("data");
      body.push(chunk);
    },
    onEnd() {
      calls.push("end");
      ended();
    },
    onError(err) {
      calls.push("error");
      error = err;
      ended();
    },
  };
  return {
    sink,
    calls,
    done,
    get status() {
      return status;
    },
    get headers() {
      return headers;
    },
    get body() {
      return Buffer.concat(body).toString();
    },
    get error() {
      return error;
    },
  };
}

test("the answer for a response the caller may not reach is the simulated backend's own 404 for an id it does not store, byte for byte", async () => {
  const sim = await startTestBackend();
  try {
    const id = "resp_0123456789abcdef";
    const res = await fetch(`${sim.url}/v1/responses/${id}`);
    const mine = unknownResponseAnswer(id);
    assert.equal(mine.status, res.status);
    assert.equal(mine.headers["content-type"], res.headers.get("content-type"));
    assert.equal(mine.body.toString(), await res.text(), "the body must not tell them apart");
    assert.equal(mine.headers["content-length"], String(mine.body.length));
  } finally {
    await sim.close();
  }
});

test("the replayed answer arrives after the call is returned, as a backend's: head, body, end", async () => {
  const rec = recordingSink();
  replayUnknownResponse("resp_x", rec.sink);
  assert.deepEqual(rec.calls, [], "nothing before the trip has its call");
  await rec.done;
  assert.deepEqual(rec.calls, ["start", "data", "end"]);
  assert.equal(rec.status, 404);
  assert.equal(rec.headers["content-type"], "application/json");
  assert.equal(JSON.parse(rec.body).error.message, "Response with id 'resp_x' not found.");
});

test("a replay aborted before it is played ends in the abort's reason and never starts", async () => {
  const rec = recordingSink();
  const call = replayUnknownResponse("resp_x", rec.sink);
  const reason = new Error("client closed");
  call.abort(reason);
  call.abort(new Error("twice"));
  await rec.done;
  assert.deepEqual(rec.calls, ["error"]);
  assert.equal(rec.error, reason);
});
