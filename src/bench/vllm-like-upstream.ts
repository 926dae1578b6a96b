/**
 * The vLLM-like upstream, by the path the proxy benchmark's files import it from: it lives in
 * src/bench/upstream (the server and its engine steps in vllm-like-server.ts and
 * engine-steps.ts, what it reads of a request in upstream-request.ts, what it writes in
 * answer-events.ts, with the simulated backend's writers).
 */
export {
  type AnswerEvents,
  answerEvents,
  answerText,
  StreamEvents,
} from "./upstream/answer-events.ts";
export {
  API_PATHS,
  type Api,
  type ChatRequest,
  DEFAULT_MODEL,
} from "./upstream/upstream-request.ts";
export {
  startVllmLikeUpstream,
  type UpstreamStats,
  type VllmLikeOptions,
  type VllmLikeUpstream,
} from "./upstream/vllm-like-server.ts";
