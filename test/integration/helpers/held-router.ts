import { type FakeBackend, startFakeBackend } from "./fake-backend.ts";
import { startTestRouter, type TestRouter } from "./test-router.ts";

/**
 * A router in front of one fake backend that reports no KV capacity, so whatever arrives is
 * held until the test has the backend report one (`setNumGpuBlocks`) and runs a tick
 * (`ticker.runOnce()`). Ticks come only from the test: the clock moves the keep-alive comments
 * and the deadlines alone. Both are closed after `run`.
 */
export async function withHeldRouter(
  run: (router: TestRouter, backend: FakeBackend) => Promise<void>,
  flags: Record<string, unknown> = {},
): Promise<void> {
  const backend = await startFakeBackend({ numGpuBlocks: 0 });
  const router = await startTestRouter({
    backends: backend.url,
    "scheduler-interval": "3600",
    ...flags,
  });
  try {
    await run(router, backend);
  } finally {
    await router.close();
    await backend.close();
  }
}
