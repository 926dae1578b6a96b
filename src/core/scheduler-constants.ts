/**
 * Every number the scheduler's rules need, with its source, in a module that imports
 * nothing: the config (scheduler-config.ts) and the priority defaults both read it.
 */

/** Tokens of decode headroom reserved per active program (ThunderAgent `BUFFER_PER_PROGRAM`). */
export const BUFFER_PER_PROGRAM_TOKENS = 100;
/**
 * Named points on the frontier between throughput and the longest wait, over the ageing bound
 * (a request parked this long has room made for its program) and the max pause (one parked
 * this long is seated at once), as measured on the DeepSeek trace at 128 programs on two
 * backends whose KV holds a third of the contexts (src/core/README.md "Bounded waits"):
 *
 * - `bounded` (the default): every wait ends by 300 s, well inside the 600 s after which the
 *   official OpenAI and Anthropic SDKs give up on a request that has sent no byte and retry it
 *   (a retry re-prefills its whole context on a backend that is already full). It costs
 *   steps/min: every bounded wait is a resume that re-prefills an evicted context.
 * - `balanced`: waits end by 900 s (641–664 s measured: past the SDKs' 600 s), for 6–15 %
 *   more steps/min than `bounded` (scripts/README.md "Bounds on waiting per preset").
 * - `throughput`: ThunderAgent's bounds (no ageing, a forced resume at 30 minutes) and its
 *   packing: where a host tier holds the contexts, programs are still packed under the GPU's
 *   KV and held at their tool boundary (`tierPacking: "gpu"`, pause-price.ts) rather than left
 *   to the engine's rotation. The most steps/min, for batch rollouts whose clients wait as
 *   long as it takes.
 */
export const TAIL_NAMES = ["bounded", "balanced", "throughput"] as const;

export type TailPreset = (typeof TAIL_NAMES)[number];

/**
 * Where a backend's host tier holds the contexts: `rotate` admits what GPU and tier hold
 * together and lets the engine rotate the programs within it (waits stay the engine's); `gpu`
 * packs under the GPU's KV and holds the rest at their tool boundary, as ThunderAgent does
 * (more steps/min, waits up to the max pause). Backends without such a tier are packed under
 * their GPU either way.
 */
export type TierPacking = "rotate" | "gpu";
export const TIER_PACKINGS = ["rotate", "gpu"] as const satisfies readonly TierPacking[];

export const TAIL_PRESETS: Readonly<
  Record<
    TailPreset,
    { readonly ageingMs: number; readonly maxPauseMs: number; readonly tierPacking: TierPacking }
  >
> = {
  bounded: { ageingMs: 240_000, maxPauseMs: 300_000, tierPacking: "rotate" },
  balanced: { ageingMs: 600_000, maxPauseMs: 900_000, tierPacking: "rotate" },
  throughput: { ageingMs: 0, maxPauseMs: 1_800_000, tierPacking: "gpu" },
};

/** The shipped preset: a wait fits inside the common clients' patience. */
export const DEFAULT_TAIL: TailPreset = "bounded";

/**
 * The bound on every pause: a request parked this long is seated at once (a forced resume);
 * the default preset's.
 */
export const MAX_PAUSE_MS = TAIL_PRESETS[DEFAULT_TAIL].maxPauseMs;
/** Idle lease: a program silent this long is released, so abandoned programs do not stay booked. */
export const IDLE_TIMEOUT_MS = 1_800_000;
/** ThunderAgent `DEFAULT_TOOL_COEFFICIENT`: acting tokens count at full weight. */
export const ACTING_TOKEN_WEIGHT = 1.0;
/** ThunderAgent `DEFAULT_TOKEN_PROGRESS_INTERVAL` (there: SSE events; here: completion tokens). */
export const PROGRESS_INTERVAL_TOKENS = 20;
/** Consecutive failed polls/forwards before a backend is unhealthy. */
export const UNHEALTHY_AFTER_FAILURES = 3;
/** Initial `char_to_token_ratio` before the first usage arrives. */
export const INITIAL_CHARS_PER_TOKEN = 5.0;
/** Momentum of the ratio update: `ratio = 0.2·sample + 0.8·old`. */
export const CHARS_PER_TOKEN_SAMPLE_WEIGHT = 0.2;
/**
 * Pause-duration observations kept until the metrics adapter drains them. Bounded so that a
 * runtime that never drains cannot grow memory without limit; the oldest are dropped.
 */
export const MAX_PAUSE_OBSERVATIONS = 10_000;

/**
 * Learned headroom (src/core/headroom.ts): each active program keeps room for this many of its
 * steps' context growth (tool output + completion; on the mini-swe-agent DeepSeek trace 446
 * tokens on average, p90 998, max 4.6K, against ThunderAgent's flat 100). One step covers the
 * step in flight; the others cover the steps taken before a pause decided at the next tick
 * frees anything (a marked program pauses only when its turn ends) and keep free KV blocks in
 * the engine, so that an ACTING program's prefix survives its tool call (vLLM evicts free
 * blocks in LRU order, and a program paused moments ago freed its blocks after the ACTING
 * one). Chosen by measurement: src/core/README.md "Evidence".
 */
export const GROWTH_HEADROOM_STEPS = 4;
/** Weight of a program's newest step growth in its moving average (a few steps of memory). */
export const GROWTH_EMA_WEIGHT = 0.25;
/**
 * Router-wide priors (step growth, tool time) are the median of the last this-many
 * observations across programs: one outlier moves a prior by at most one rank of the window.
 */
export const PRIOR_WINDOW = 101;
/**
 * Largest headroom one program may hold: about twice the largest step growth of the shipped
 * traces (4.6K tokens), so one outlier step cannot reserve a large share of a backend.
 */
export const GROWTH_HEADROOM_CAP_TOKENS = 8192;
/**
 * The prefix-sharing credit is the minimum of the last this-many raw credits (one per tick): a
 * gap the engine shows for one sample only (a request still being admitted) never counts.
 */
export const SHARED_CREDIT_SAMPLES = 3;
/**
 * Resume ageing (src/core/resume.ts case 1): a request parked this long has its program seated,
 * room made for it if need be; smallest-first resume otherwise leaves large programs waiting
 * until the forced resume. The default preset's (TAIL_PRESETS above).
 */
export const AGEING_MS = TAIL_PRESETS[DEFAULT_TAIL].ageingMs;

/**
 * An ACTING program's booked room is lent to waiting work once its tool call has run this
 * many times its expected tool time (src/core/lending.ts). DeepSeek trace, seed 7, tool times
 * × 1 / × 50 / × 100: lending (with LEND_MAX_HOLD_MS) 2.25 / 1.24 / 1.00 × default's
 * steps/min, never lending 2.29 / 1.03 / 0.77 (src/core/README.md "Evidence").
 */
export const LEND_AFTER_TOOL_TIMES = 1;
/**
 * Idle room is worth holding only for a program that is back soon: one expected to stay in
 * its tool call longer than this lends its room at once, and none holds it longer (ms).
 * DeepSeek trace, seed 7, tool times × 1 / × 5 / × 50 / × 100, tr ÷ default steps/min:
 * 20 s 2.19 / 2.09 / 1.17 / 1.00; 30 s 2.25 / 2.23 / 1.24 / 1.00; 40 s 2.25 / 2.21 / 1.27 /
 * 0.97; 60 s 2.25 / 2.20 / 1.27 / 0.95; holding through the expected tool time with no
 * such bound 2.25 / 2.20 / 1.26 / 0.91 (src/core/README.md "Evidence").
 */
export const LEND_MAX_HOLD_MS = 30_000;
/**
 * A program whose answer ended its turn with no tool call (likely-done.ts) is released this
 * long after, unless it sends again: a few seconds, more than the pause between a client's
 * answers when it goes on at once, far less than the idle lease.
 */
export const FINAL_GRACE_MS = 5_000;
/** Weight of a program's newest tool call in its moving average (a few calls of memory). */
export const TOOL_EMA_WEIGHT = 0.25;
/**
 * How long a request may wait for room on a backend where a pause costs a transfer from the
 * engine's host KV tier (pause-price.ts) before room is made for it, oldest first: there a
 * large program's context comes back cheaply, so it takes its turn instead of waiting behind
 * smaller ones until the ageing bound (ms). Measured under "A host KV tier" in scripts/README.md.
 */
export const TIER_ROTATION_MS = 30_000;
/**
 * How far the contexts on a backend and paused from it may outgrow its host KV tier while a
 * pause there is still priced as a transfer (pause-price.ts): the tier then loses a part of
 * them to its LRU, and the engine computes that part again, but pausing down to the GPU's KV
 * would lose far more. DeepSeek trace, 2 × 26,000 blocks, seed 7, tr: a fixed batch of 256
 * programs (128 at a time) with 200 GiB per engine took 5,837 s at 1.0 (the default router
 * 5,219 s) and 5,238 s at 1.5; an hour at 128 programs gave 233.0 / 233.6 steps/min at 200
 * GiB and 201.6 / 202.1 at 100 GiB (1.25: 202.6), where the contexts are about twice the tier.
 */
export const HOST_TIER_OVERCOMMIT = 1.5;
/**
 * How long a new program's first request may wait for room before room is made for it
 * (wait-bounds.ts), oldest first (ms). A fixed batch of 256 DeepSeek-trace programs, 128 at a
 * time, on 2 × 26,000 blocks without a host tier (seed 7): the spread of the programs' first
 * answers 98.7 s without it, 87.4 s at 60 s, 50.8 s at 30 s, with the makespan unchanged
 * (6,783 / 6,769 / 6,778 s) and steps/min over an hour 197.7 / 196.6 / 198.2.
 */
export const NEW_PROGRAM_START_MS = 30_000;

/**
 * The rate at which a request's context turns into delay in the `smallest` and `uncached`
 * engine orders (engine-order.ts): 250 tokens a second, so a 25,000-token context lets
 * requests that reach the router up to 100 s after it go first (capped by the tail bound).
 */
export const ORDER_AGEING_TOKENS_PER_S = 250;

/** How an engine that schedules by priority reads the field (records.ts `PriorityPolarity`). */
export const PRIORITY_POLARITIES = ["lower-first", "higher-first"] as const;
