import type { UpstreamPools } from "../backends/upstream-pools.ts";
import type { IdentitySource } from "../config/identity-sources.ts";
import type { RouterMetrics } from "../metrics/router-metrics.ts";
import type { StepProfiler } from "../metrics/step-profiler.ts";
import type { Clock } from "../runtime/clock.ts";
import type { InflightTracker } from "../runtime/inflight-tracker.ts";
import type { RunLoop } from "../runtime/run-loop.ts";
import type { Logger } from "../util/logger.ts";
import type { BodyBudget } from "./body-budget.ts";
import type { CallerResolver } from "./caller.ts";
import type { ResponseFlavour, UpstreamStream } from "./dialects/dialect.ts";
import type { BudgetResolver } from "./program-budget.ts";
import type { ClassResolver } from "./request-class.ts";
import type { ResponseHomes } from "./response-homes.ts";

/** Where a router is in its life: a SIGTERM turns serving into draining, then stopping. */
export type CellPhase = "serving" | "draining" | "stopping";

/** Everything the HTTP layer needs, built once by the composition root. */
export interface ProxyDeps {
  loop: RunLoop;
  clock: Clock;
  upstreams: UpstreamPools;
  metrics: RouterMetrics;
  profiler: StepProfiler | null;
  logger: Logger;
  inflight: InflightTracker;
  identityOrder: readonly IdentitySource[];
  /**
   * Priority classes: resolves each request's class; null while priorities are off,
   * and then nothing about a request's class is read, stripped or gated.
   */
  priority: ClassResolver | null;
  /** Names each request's tenant, which scopes its program id (program-scope.ts). */
  callers: CallerResolver;
  /** Each request's program budget (program-budget.ts). */
  budgets: BudgetResolver;
  maxBodySize: number;
  /** Request bytes held at once across all requests (`--max-buffered-bytes`). */
  bodyBudget: BodyBudget;
  /** `--admin-token`; null = the admin routes answer loopback clients only. */
  adminToken: string | null;
  /** Whether plain requests are streamed from the backend and rebuilt (prepare-request.ts). */
  upstreamStream: UpstreamStream;
  /** The backend type, whose layout a rebuilt plain answer follows. */
  responseFlavour: ResponseFlavour;
  /** Streamed completion tokens between `request_progress` events. */
  progressIntervalTokens: number;
  /** `--hold-keepalive`: a held stream is answered at once and kept alive (held-stream.ts). */
  holdKeepalive: boolean;
  newRequestId(): string;
  /** A request was parked by the core (the runtime may need an earlier deadline tick). */
  onParked(): void;
  /** True once shutdown began: new requests are refused with 503. */
  isStopping(): boolean;
  /** Serving, draining (new programs refused, known ones served) or stopping. */
  phase(): CellPhase;
  /** This router's name among cells (`--cell`), in /health. */
  cell: string;
  /** Which backend stores each Responses response (response-homes.ts); made by createApp. */
  responseHomes?: ResponseHomes;
}
