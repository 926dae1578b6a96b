/**
 * The simulated backend runs on the router's clock (src/runtime/clock.ts): one interface for
 * the router, the backend and the bench, so a test can run all three on one manual or virtual
 * clock. Re-exported here for the backend's tests, which import time from this folder.
 */
export {
  type Clock,
  createManualClock,
  type ManualClock,
  type TimerHandle,
  wallClock,
} from "../runtime/clock.ts";
