import type { BudgetKind } from "./budget-rules.ts";
import type { BackendMetricsSample, ProgramBudget } from "./events.ts";
import type { ClassIndex } from "./priority/priority-classes.ts";

/**
 * The core's records and the shapes of its swappable decisions, in one module that imports
 * only two leaves (the event shapes and the class indices): every module may depend on it and
 * it depends on none of them, so the core's modules form no import cycle, not even through
 * types.
 */

export type ProgramStatus = "REASONING" | "ACTING";

export type ProgramState = "ACTIVE" | "PAUSED" | "TERMINATED";

export interface BackendSpec {
  /** Stable id: the backend's base URL (ThunderAgent keys everything by URL). */
  id: string;
  type: "vllm" | "sglang";
  /**
   * The engine schedules by priority and reads the request's `priority` field this way round
   * (engine-order.ts); absent = it does not, and is never sent the field.
   */
  priorityScheduling?: PriorityPolarity;
}

/** Which `priority` values an engine serves first: vLLM lower, SGLang higher by default. */
export type PriorityPolarity = "lower-first" | "higher-first";

export interface ProgramRecord {
  readonly id: string;
  /** Creation order: the stable tie-break among equal programs. */
  readonly seq: number;
  readonly parentProgramId: string | null;
  /** Its parent while both live (tree.ts); null for a root, or once either has ended. */
  parent: ProgramRecord | null;
  /** Its live children (tree.ts): they end when it does. */
  readonly children: Set<ProgramRecord>;
  /**
   * A request sent without a program id runs as a program of one step of its own: admitted,
   * queued and bounded like any other, released when it ends, never listed or nameable.
   */
  readonly anonymous: boolean;
  /** REASONING while ≥1 request is in flight, ACTING (in a tool call) otherwise. */
  status: ProgramStatus;
  /** ACTIVE on `backend`, or PAUSED in the queue (TERMINATED records are dropped). */
  state: ProgramState;
  backend: BackendBook | null;
  /** Backend it was paused from; resume prefers it while its prefix may still be cached. */
  originBackend: string | null;
  /**
   * The pin of its parked requests (pinned-backend.ts): while a request that continues state
   * one backend holds waits, the program is placed there or nowhere.
   */
  pinnedBackend: string | null;
  /** False until first placed: such programs form the "new" resume group. */
  placedOnce: boolean;
  /** Tokens this program counts for in its backend's books (its footprint). */
  tokens: number;
  /** Tokens it counts for in its backend's materialised sum (the shared credit; ledger.ts). */
  creditTokens: number;
  /** Headroom it counts for in its backend's books (headroom.ts). */
  headroom: number;
  /** Moving average of its context growth per step; −1 until two steps have ended. */
  growthEma: number;
  /** Its engine total at the end of its last step with usage; −1 before. */
  lastStepTokens: number;
  /**
   * ACTING past its expected tool time: its tokens and headroom are lent to waiting work
   * (left out of its backend's books) until it sends again (lending.ts).
   */
  lent: boolean;
  /** Moving average of its tool-call durations (ms); −1 until one has been seen. */
  toolEma: number;
  /** The resume pass during which it was last paused (such a program waits for the next). */
  pausedInPass: number;
  /** Last known total: set when a request ends (engine usage when it came, else the estimate). */
  knownTokens: number;
  /** The backend that answered its last step: its context is there unless evicted since. */
  servedOn: string | null;
  /** Messages already covered by `knownTokens` (0 until the first usage). */
  countedMessages: number;
  steps: number;
  inFlight: RequestRecord[];
  parked: RequestRecord[];
  markedForPause: boolean;
  actingSince: number;
  pausedSince: number | null;
  pausedMsTotal: number;
  lastActivity: number;
  /** Order of entry into the queue: the stable tie-break of the resume order. */
  queueSeq: number;
  /** Stamp of the last resume pass that listed this program (deduplicates `queueOrder`). */
  orderStamp: number;
  /** Priority class of its latest request; `default` while priorities are off. */
  cls: ClassIndex;
  /** Order of its latest placement on a backend: preemption takes the most recent first. */
  admitSeq: number;
  /** Limits it runs under (budget.ts); null = none. */
  budget: ProgramBudget | null;
  /** Prompt + completion tokens its ended requests used (the tokens budget). */
  usedTokens: number;
  /**
   * Steps the engine was given (the steps budget): counted when a step's request is first
   * dispatched, so a request the router refused or a retry costs none.
   */
  budgetSteps: number;
  /** Its first request's arrival (the wall budget). */
  startedAt: number;
  /** When its last answer marked it likely done (likely-done.ts); null = not marked. */
  likelyDoneAt: number | null;
  /**
   * It sent again after an answer with no tool call: it answers that way mid-run (an agent
   * that writes its actions as text, a turn handed to a human), so such an answer says
   * nothing about its end.
   */
  goesOnAfterStop: boolean;
}

/** A program the router ended on its own: when, and by which budget, as likely done, or idle. */
export interface EndedId {
  at: number;
  why: BudgetKind | "likely_done" | "idle";
  /**
   * What its budget had used (ended-ids.ts): a program that comes back goes on under it, so an
   * end the router chose never hands a caller a fresh budget.
   */
  carry: BudgetCarry | null;
}

/** A budget and what was used of it, carried across a program's release and return. */
export interface BudgetCarry {
  budget: ProgramBudget;
  steps: number;
  usedTokens: number;
  startedAt: number;
}

export interface RequestRecord {
  readonly id: string;
  /** null = anonymous (also after its program was released while it ran). */
  program: ProgramRecord | null;
  backend: BackendBook | null;
  parkedAt: number | null;
  /** When it reached the router (the engine order's key starts here). */
  readonly arrivedAt: number;
  readonly maxWaitMs: number | null;
  readonly final: boolean;
  readonly promptChars: number;
  readonly messageCount: number;
  /** Context estimate at arrival (tokens). */
  readonly baseTokens: number;
  /** Current tokens: base + streamed completion, replaced by `usage.total_tokens`. */
  tokens: number;
  progressApplied: number;
  usageSeen: boolean;
  cancelled: boolean;
  /** The engine produced its first token: its prompt is in the KV cache (the shared credit). */
  prefilled: boolean;
  /** Priority class the request arrived with (its queue, timeout and counters). */
  cls: ClassIndex;
  /** The adapter committed its first byte to the client: never preempted from then on. */
  firstByte: boolean;
  /** It starts a step (not a retry) not yet counted against the steps budget (budget.ts). */
  countsStep: boolean;
  /** The backend holding the state it continues (pinned-backend.ts); null = any. */
  readonly pinnedBackend: string | null;
}

export interface BackendBook {
  readonly id: string;
  readonly type: BackendSpec["type"];
  /** How its engine reads `priority`; null = it schedules first come, first served. */
  readonly priorityPolarity: PriorityPolarity | null;
  healthy: boolean;
  consecutiveFailures: number;
  /** KV capacity in tokens; null until a metrics sample carries it. */
  capacity: number | null;
  /** The "capacity unknown" warning was logged (once until the capacity is known). */
  capacityWarned: boolean;
  /** Prefix-sharing credit from engine truth, refreshed every tick. */
  shared: number;
  /** The last SHARED_CREDIT_SAMPLES raw credits, oldest first (backend-health.ts). */
  readonly creditSamples: number[];
  /** Σ tokens of REASONING programs whose request the engine has prefilled (ledger.ts). */
  materialisedTokens: number;
  /** Σ headroom of the active programs (headroom.ts). */
  headroomTokens: number;
  /** Σ headroom of the REASONING programs (their next step's growth: room.ts). */
  reasoningHeadroom: number;
  /** ACTIVE programs whose room is lent (lending.ts). */
  lentPrograms: number;
  /** Their contexts, which the books leave out of the room (kept for the host tier's share). */
  lentTokens: number;
  /** Contexts of the programs paused from it, as of the last tick (pause-price.ts). */
  pausedFromTokens: number;
  /** The engine's last report, beside the books; null = unknown (truth.ts). */
  truth: TruthBook | null;
  /** Preemption counter of the previous sample (a rise means the engine is preempting). */
  lastPreemptions: number | null;
  /** Σ headroom of the marked programs. */
  markedHeadroom: number;
  reasoningTokens: number;
  actingTokens: number;
  reasoningPrograms: number;
  actingPrograms: number;
  markedTokens: number;
  markedPrograms: number;
  /** Acting-token decay accumulator (see ledger.ts `decayedActingTokens`). */
  decaySum: number;
  decayBase: number;
  anonymousInFlight: number;
  anonymousTokens: number;
  readonly programs: Set<ProgramRecord>;
  /** Every request dispatched here and not yet finished (program and anonymous). */
  readonly inFlight: Set<RequestRecord>;
  lastMetrics: BackendMetricsSample | null;
  /** Per-class share of the books, only while priorities are on (ledger.ts keeps it). */
  classBooks: ClassBook[] | null;
}

/** The swappable pure decisions (queue policies and priority classes plug in here). */
export interface SchedulerPolicies {
  resumeOrder: ResumeOrder;
  place: PlacementFn;
  pauseVictims: PauseVictimFn;
  pausePrice: PausePriceFn;
  engineOrder: EngineOrderFn;
}

/** The orders the router can hand an engine that schedules by priority (engine-order.ts). */
export type EngineOrderName = "auto" | "arrival" | "smallest" | "uncached";

/**
 * A request's key in the engine's order, in ms on the core's clock (lower = served sooner),
 * given the longest offset from its arrival the tail preset allows, the backend it goes to and
 * what a pause costs there now.
 */
export type EngineOrderFn = (
  r: RequestRecord,
  capMs: number,
  b: BackendBook,
  price: PausePrice,
) => number;

/**
 * The engine's own report on a backend, kept beside the router's books (its belief). The
 * belief is a forecast for choosing whom to pause; the truth says whether the GPU has room
 * now (room.ts weighs the two). Every figure the engine did not report is unknown, never 0.
 */
export interface TruthBook {
  /** Event time of the sample. */
  readonly at: number;
  /** 0..1, or null when the backend does not export its KV usage. */
  readonly kvUsage: number | null;
  readonly running: number | null;
  readonly waiting: number | null;
  /** The preemption counter rose since the previous sample: the engine is out of KV. */
  readonly preempting: boolean;
  /**
   * Tokens the engine's usage may not show yet: requests in flight but not prefilled when the
   * sample was taken, plus every request dispatched to the backend since.
   */
  pendingTokens: number;
  /** Requests handed to the backend since the sample (the engine has not shown them yet). */
  sentSince: number;
}

/** Per backend, per class: the class's share of the backend's token books (see ledger.ts). */
export interface ClassBook {
  reasoningTokens: number;
  actingTokens: number;
  programs: number;
  /** Σ headroom of the class's programs on the backend (each its own: headroom.ts). */
  headroomTokens: number;
}

export interface PauseVictims {
  /** ACTING programs to pause now (their KV is idle; pausing frees capacity at once). */
  pause: ProgramRecord[];
  /** REASONING programs to mark: paused when they next become ACTING. */
  mark: ProgramRecord[];
}

export interface PauseVictimInput {
  /** Programs active on the backend. */
  programs: Iterable<ProgramRecord>;
  /** Projected overflow in tokens: used − marked − capacity (> 0 when called). */
  overflow: number;
  actingTokenWeight: number;
  /** The flat buffer; the default policy uses each program's own `headroom` (≥ buffer). */
  bufferPerProgram: number;
  /**
   * Keep at least one active, unmarked program (case 3). False when the room is made for a
   * program that takes the backend next, so it is never left empty. Default true.
   */
  keepOne?: boolean;
}

export type PauseVictimFn = (input: PauseVictimInput) => PauseVictims;

/**
 * Bin choice for one program given each backend's remaining room (null = not a candidate).
 * Pure functions so a policy can be swapped without touching the resume pass.
 * Returns the chosen index, or -1 when nothing fits.
 */
export type PlacementFn = (rooms: readonly (number | null)[], need: number) => number;

/** Negative when `a` should be resumed before `b`. Must be a total order. */
export type ResumeOrder = (a: ProgramRecord, b: ProgramRecord) => number;

/**
 * What priority classes change in the core's passes, behind one narrow interface: the resume
 * pass, the arrival cases and the overdue seat call these and nothing else of the class
 * machinery. Without priorities everything is one class (`default`) and these are the
 * single-class rules below; src/core/priority/priority-rules.ts gives the class rules.
 */
export interface ClassRules {
  /** The classes whose queue heads are checked for overdue waits, in that order. */
  readonly overdueOrder: readonly ClassIndex[];
  /** The parked requests of class `cls`, oldest first. */
  parked(cls: ClassIndex): Iterable<RequestRecord>;
  /** How long class `cls`'s head may wait before room is made for it (ms; ∞ = never). */
  overdueAfterMs(cls: ClassIndex): number;
  /** Room on `b` held back from class `cls` (higher classes' idle reservations). */
  hold(b: BackendBook, cls: ClassIndex): number;
  /** Whether `victim` may be paused to make room for a class-`cls` program. */
  mayDisplace(victim: ProgramRecord, cls: ClassIndex): boolean;
}

/** What a pause costs on a backend, and what admission makes of it (pause-price.ts). */
export interface PausePrice {
  readonly name: "prefill" | "transfer";
  /** What a backend can hold for admission; null while the GPU's capacity is unknown. */
  admissionCapacity(b: BackendBook): number | null;
  /**
   * The engine's report of its GPU bounds the room (its queue and preemptions mean the backend
   * is full); false: the books alone decide, against `admissionCapacity`.
   */
  readonly truthBoundsRoom: boolean;
  /** An overdue program gets room made on the backend it was paused from. */
  readonly originIsCheapest: boolean;
  /** The bound on a wait to come back to a healthy backend at this price (ms); null = none. */
  readonly returnWaitMs: number | null;
}

/** The policy: a backend's price now, from its books and the engine's last report. */
export type PausePriceFn = (b: BackendBook) => PausePrice;
