import { pausePriceOf } from "./pause-price.ts";
import type {
  BackendBook,
  EngineOrderFn,
  EngineOrderName,
  PriorityPolarity,
  RequestRecord,
} from "./records.ts";
import { ORDER_AGEING_TOKENS_PER_S } from "./scheduler-constants.ts";
import type { SchedulerState } from "./scheduler-state.ts";

/**
 * The order the router hands an engine that schedules by priority: one injected policy
 * (`SchedulerPolicies.engineOrder`) beside placement, resume order, pause victims and the
 * price of a pause.
 *
 * Such an engine keeps its waiting queue sorted by (priority, arrival) and, when its KV runs
 * out, preempts the running request with the worst key. An order is therefore a key per request,
 * fixed when the request is handed over: the engine never asks again. Each order here is the
 * request's arrival at the router plus an offset, capped by the tail preset's bound, so ageing
 * is built into the key: a request is overtaken only by requests that reached the router less
 * than its offset after it, and never by one that arrived more than the bound later. A request
 * the router held keeps its arrival, so it goes before everything that came while it waited.
 *
 *   - `arrival`: no offset. The engine serves in the order requests reached the router, not
 *     the order it received them (a held request's place is kept).
 *   - `smallest`: an offset of the request's context at `ORDER_AGEING_TOKENS_PER_S`, so short
 *     contexts go first and a long one ages into its turn; the engine's victim is the longest
 *     context that arrived late.
 *   - `uncached`: an offset of what the engine must still prefill: the context less what its
 *     program's last step left on this backend. A step continuing a context the engine still
 *     holds goes first (before that context is evicted); a cold or moved one waits its offset.
 *   - `auto` (shipped): `smallest` where a pause costs a re-prefill, `arrival` where the
 *     backend's host tier holds the contexts (the price of a pause, pause-price.ts). Measured in
 *     `simulate` (src/core/README.md): on vLLM's rules without a tier `smallest` gives the
 *     default router 1.12–1.14 × the first-come engine at a step p99 1.03–1.05 × its own; with a
 *     200 GiB tier it loses a fifth (0.80 ×), because the tier evicts least recently used and a
 *     request the order delays loses its host copy and is prefilled again, while `arrival`
 *     keeps the tier's order (1.00 ×). Under tr, which holds what does not fit, no order moved
 *     steps/min beyond seed noise.
 *
 * The value leaves the core in the backend's own polarity (vLLM: lower first; SGLang: higher
 * first unless told otherwise), in whole seconds since the router first handed a request over,
 * and only for a backend declared to schedule by priority: any other gets nothing. A request on
 * a route that carries no `priority` (Anthropic's Messages) is read by the engine as its default:
 * 0 under vLLM's rules, so it goes before every ordered request; under SGLang's the lowest
 * priority there is, so it goes after them (the sections on the engine order in
 * src/core/README.md say so to operators).
 */
const arrival: EngineOrderFn = (r) => r.arrivedAt;

const smallest: EngineOrderFn = (r, capMs) => r.arrivedAt + offsetMs(r.baseTokens, capMs);

const uncached: EngineOrderFn = (r, capMs, b) => {
  const p = r.program;
  const held = p !== null && p.servedOn === b.id ? Math.min(p.knownTokens, r.baseTokens) : 0;
  return r.arrivedAt + offsetMs(r.baseTokens - held, capMs);
};

function offsetMs(tokens: number, capMs: number): number {
  return Math.min(capMs, (Math.max(0, tokens) / ORDER_AGEING_TOKENS_PER_S) * 1000);
}

const auto: EngineOrderFn = (r, capMs, b, price) =>
  price.name === "transfer" ? arrival(r, capMs, b, price) : smallest(r, capMs, b, price);

export const ENGINE_ORDERS: Readonly<Record<EngineOrderName, EngineOrderFn>> = {
  auto,
  arrival,
  smallest,
  uncached,
};

/** The shipped order. */
export const DEFAULT_ENGINE_ORDER: EngineOrderName = "auto";

/**
 * The longest offset an order may give `r`: how long its class may wait before room is made for
 * it (the tail preset's bound without priority classes, wait-bounds.ts) or its own `maxWaitMs`,
 * so no request waits inside the engine behind later arrivals for longer than it could be held
 * outside it.
 */
export function orderCapMs(state: SchedulerState, r: RequestRecord): number {
  const cap = state.rules.overdueAfterMs(r.cls);
  return r.maxWaitMs === null ? cap : Math.min(cap, r.maxWaitMs);
}

/** The `priority` value for `r` on `b`, in `b`'s polarity; null when `b` takes none. */
export function engineOrderFor(
  state: SchedulerState,
  r: RequestRecord,
  b: BackendBook,
): number | null {
  if (b.priorityPolarity === null) return null;
  if (state.orderEpoch === null) state.orderEpoch = r.arrivedAt;
  const key = state.policies.engineOrder(r, orderCapMs(state, r), b, pausePriceOf(state, b));
  const seconds = Math.floor((key - state.orderEpoch) / 1000);
  return toPolarity(seconds, b.priorityPolarity);
}

/** Lower-is-sooner seconds as the engine reads them (never -0, which JSON writes as 0 anyway). */
export function toPolarity(seconds: number, polarity: PriorityPolarity): number {
  return polarity === "lower-first" || seconds === 0 ? seconds : -seconds;
}
