import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import type { SimulatedEngine } from "../../src/engine/engine.ts";
import { hostTier, lastOutput, request, runToIdle, smallEngine, tokens } from "./engine-helpers.ts";

/** Seeded: FC_SEED replays a failure (fast-check prints the seed of any failing run). */
const SEED = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);

/** 8 usable GPU blocks of 16 tokens, so one 120-token filler evicts everything else. */
const tight = { numGpuBlocks: 9, maxModelLen: 128 };

/** Run `x` (64 tokens: 3 whole blocks can hit), evict it from the GPU with a filler, return the end. */
function computeThenEvict(engine: SimulatedEngine): number {
  engine.add(request("x", tokens(64, 1), { maxTokens: 1 }));
  let end = runToIdle(engine).end;
  engine.add(request("filler", tokens(120, 5000), { maxTokens: 1, arrivalTime: end }));
  end = runToIdle(engine, end).end;
  return end;
}

describe("engine host tier", () => {
  it("brings an evicted prefix back from host memory at transfer cost, not prefill cost", () => {
    const results = [{}, hostTier(64)].map((tier) => {
      const engine = smallEngine({ ...tight, ...tier });
      const end = computeThenEvict(engine);
      engine.add(request("x-again", tokens(64, 1), { maxTokens: 1, arrivalTime: end }));
      const run = runToIdle(engine, end);
      const out = lastOutput(run, "x-again");
      return {
        engine,
        out,
        run,
        end,
        computed: run.steps.reduce((n, s) => n + s.scheduledTokens, 0),
      };
    });
    const [without, withTier] = results;
    assert.equal(without.out.numCachedTokens, 0, "the GPU alone lost the prefix");
    assert.equal(without.computed, 64);
    assert.equal(withTier.out.numCachedTokens, 48);
    assert.equal(withTier.out.numLoadedTokens, 48);
    assert.equal(withTier.computed, 16, "only the tail after the loaded blocks is computed");
    const tier = withTier.engine.stats().hostTier!;
    const cfg = withTier.engine.config;
    const bytes = 48 * (cfg.kvBytesPerToken as number);
    assert.equal(tier.toDevice.bytes, bytes);
    assert.equal(tier.toDevice.seconds, bytes / (cfg.hostLinkBytesPerSecond as number));
    assert.equal(tier.externalHits, 48);
    // The request waited for its copy: nothing of it ran before the copy ended.
    const firstCompute = withTier.run.steps.find((s) => s.scheduledTokens > 0)!;
    assert.ok(firstCompute.startTime >= withTier.end + tier.toDevice.seconds);
  });

  it("loads only the part of a prefix the GPU no longer holds", () => {
    // 8 usable blocks: x leaves 4 cached (64 tokens); a 60-token filler takes the 4 never used;
    // a 30-token one then evicts x's two deepest blocks (a request frees its tail first).
    const engine = smallEngine({ ...tight, ...hostTier(64) });
    engine.add(request("x", tokens(64, 1), { maxTokens: 1 }));
    let end = runToIdle(engine).end;
    engine.add(request("f1", tokens(60, 5000), { maxTokens: 1, arrivalTime: end }));
    end = runToIdle(engine, end).end;
    engine.add(request("f2", tokens(30, 7000), { maxTokens: 1, arrivalTime: end }));
    end = runToIdle(engine, end).end;
    const before = engine.stats().hostTier!.toDevice.bytes;
    engine.add(request("x-again", tokens(64, 1), { maxTokens: 1, arrivalTime: end }));
    const out = lastOutput(runToIdle(engine, end), "x-again");
    const gpu = out.numCachedTokens - out.numLoadedTokens;
    assert.ok(
      gpu > 0 && out.numLoadedTokens > 0,
      `split: ${gpu} on GPU, ${out.numLoadedTokens} loaded`,
    );
    assert.equal(out.numCachedTokens, 48);
    assert.equal(out.numLoadedTokens, 16);
    const cfg = engine.config;
    assert.equal(
      engine.stats().hostTier!.toDevice.bytes - before,
      out.numLoadedTokens * (cfg.kvBytesPerToken as number),
    );
  });

  it("a full host pool drops its least recently used blocks first", () => {
    // 6 host blocks; 33-token prompts store 2 whole blocks each: the fourth drops the first's.
    const engine = smallEngine({ ...tight, ...hostTier(6) });
    let end = 0;
    const run = (id: string, base: number) => {
      engine.add(request(id, tokens(33, base), { maxTokens: 1, arrivalTime: end }));
      const r = runToIdle(engine, end);
      end = r.end;
      return lastOutput(r, id);
    };
    for (const base of [1, 2000, 4000, 6000]) run(`p${base}`, base);
    const tier = engine.stats().hostTier!;
    assert.equal(tier.usedBlocks, 6);
    assert.equal(tier.evictedBlocks, 2);
    // Empty the GPU's prefix cache (vLLM's reset leaves the host tier as it is).
    assert.equal(engine.resetPrefixCache?.(), true);
    assert.equal(run("second-again", 2000).numLoadedTokens, 32);
    assert.equal(run("first-again", 1).numCachedTokens, 0);
  });

  it("transfer time grows with the tokens loaded, at the profile's bandwidth", () => {
    const seconds = [32, 64, 96].map((L) => {
      const engine = smallEngine({ numGpuBlocks: 9, maxModelLen: 128, ...hostTier(64) });
      engine.add(request("x", tokens(L + 1, 1), { maxTokens: 1 }));
      let end = runToIdle(engine).end;
      engine.add(request("filler", tokens(120, 5000), { maxTokens: 1, arrivalTime: end }));
      end = runToIdle(engine, end).end;
      engine.add(request("x-again", tokens(L + 1, 1), { maxTokens: 1, arrivalTime: end }));
      const out = lastOutput(runToIdle(engine, end), "x-again");
      assert.equal(out.numLoadedTokens, L);
      return engine.stats().hostTier!.toDevice.seconds;
    });
    const bytesPerToken = hostTier(64).kvBytesPerToken as number;
    for (const [i, s] of seconds.entries()) {
      assert.equal(s, ((i + 1) * 32 * bytesPerToken) / 50e9);
    }
  });

  it("a request waiting for its load does not hold up the requests behind it", () => {
    const engine = smallEngine({ ...tight, ...hostTier(64) });
    const end = computeThenEvict(engine);
    engine.add(request("x-again", tokens(64, 1), { maxTokens: 1, arrivalTime: end }));
    engine.add(request("y", tokens(20, 3000), { maxTokens: 1, arrivalTime: end }));
    const first = engine.step(end)!;
    assert.equal(first.scheduledTokens, 20, "y runs while x-again's blocks are copied");
    assert.equal(engine.stats().hostTier!.numLoading, 1);
    assert.equal(engine.stats().numWaiting, 1, "a loading request counts as waiting, as in vLLM");
  });

  it("an aborted load frees its GPU blocks and unpins its host blocks", () => {
    const engine = smallEngine({ ...tight, ...hostTier(64) });
    const end = computeThenEvict(engine);
    engine.add(request("x-again", tokens(64, 1), { maxTokens: 1, arrivalTime: end }));
    engine.step(end);
    assert.equal(engine.inspect().waiting[0].numBlocks, 3);
    assert.equal(engine.abort("x-again", end), true);
    const v = engine.inspect();
    assert.equal(v.numReferencedBlocks, 0);
    assert.equal(engine.stats().hostTier!.numLoading, 0);
    assert.equal(engine.step(end), null, "nothing left to do");
  });

  it("keeps every invariant under random traffic with preemptions and loads", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 4, max: 40 }),
        fc.array(
          fc.record({
            shared: fc.boolean(),
            own: fc.integer({ min: 1, max: 120 }),
            maxTokens: fc.integer({ min: 1, max: 40 }),
            gap: fc.integer({ min: 0, max: 3 }),
          }),
          { minLength: 1, maxLength: 30 },
        ),
        (hostBlocks, reqs) => {
          const engine = smallEngine({
            numGpuBlocks: 24,
            maxModelLen: 256,
            maxNumBatchedTokens: 64,
            ...hostTier(hostBlocks),
          });
          const shared = tokens(48, 7);
          let now = 0;
          let next = 0;
          let finished = 0;
          for (let guard = 0; guard < 20_000; guard++) {
            while (next < reqs.length && reqs[next].gap <= guard % 4) {
              const q = reqs[next];
              const own = tokens(q.own, 10_000 * (next + 1));
              const prompt = q.shared ? [...shared, ...own] : own;
              engine.add(request(`r${next}`, prompt, { maxTokens: q.maxTokens, arrivalTime: now }));
              next++;
            }
            const r = engine.step(now);
            if (r === null) {
              if (next >= reqs.length) break;
              now += 0.01;
              continue;
            }
            assert.ok(r.duration > 0);
            now = r.startTime + r.duration;
            for (const o of r.outputs) {
              if (o.finishReason === undefined) continue;
              finished++;
              assert.ok(o.numLoadedTokens <= o.numCachedTokens);
              assert.ok(o.numCachedTokens < o.promptTokens, "the last prompt token is computed");
            }
            const v = engine.inspect();
            assert.equal(v.numFreeBlocks + v.numReferencedBlocks, 23);
            for (const q of [...v.running, ...v.waiting]) {
              assert.equal(q.numBlocks, Math.ceil(q.numComputed / 16));
            }
            const t = engine.stats().hostTier!;
            assert.ok(t.usedBlocks <= t.numBlocks);
          }
          assert.equal(finished, reqs.length, "every request finishes");
          assert.equal(engine.stats().hostTier!.numLoading, 0);
          assert.equal(engine.inspect().numReferencedBlocks, 0);
        },
      ),
      { seed: SEED, numRuns: 60 },
    );
  });
});
