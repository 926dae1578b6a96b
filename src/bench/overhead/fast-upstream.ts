/**
 * The proxy benchmark's fast upstream (`npm run bench:proxy`, the `fast` upstream and its later
 * phases): an OpenAI-like backend that costs next to nothing, so what a load through the router
 * measures is the router.
 */
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import type { UpstreamStats } from "../upstream/vllm-like-server.ts";

/** Events a long stream writes at once, as from a busy engine. */
const SSE_GROUP = 10;

export interface FastUpstream {
  url: string;
  /** What it wrote since it started. */
  stats(): UpstreamStats;
  close(): Promise<void>;
}

/**
 * A minimal fast upstream: HTTP/1.1 keep-alive over raw sockets with prebuilt answers, so the
 * machine's CPU goes to the router under test rather than to the stand-in backend. It speaks
 * just enough HTTP for undici: Content-Length request bodies, fixed or chunked responses.
 * An answer has `max_tokens` tokens (8 when not given) and leaves in one write, whole, except a
 * streamed answer of `longStream` tokens, which leaves in groups of SSE_GROUP events (the proxy
 * benchmark's SSE phase); the SSE events it wrote are counted for the `tokens` phase.
 */
export function startFastUpstream(longStream: number): Promise<FastUpstream> {
  const stats: UpstreamStats = { requests: 0, events: 0, writes: 0 };
  const usageOf = (n: number) => ({
    prompt_tokens: 12,
    total_tokens: 12 + n,
    completion_tokens: n,
  });
  const answers = new Map<number, Buffer>();
  /** The plain answer of `n` tokens: n - 1 times "tok", then "ok". */
  const answer = (n: number) => {
    let a = answers.get(n);
    if (a) return a;
    const answerBody = JSON.stringify({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: `${"tok".repeat(n - 1)}ok` },
          finish_reason: "stop",
        },
      ],
      usage: usageOf(n),
    });
    a = Buffer.from(
      `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(answerBody)}\r\nkeep-alive: timeout=30\r\n\r\n${answerBody}`,
    );
    answers.set(n, a);
    return a;
  };
  const metricsBody =
    'vllm:cache_config_info{block_size="16",engine="0",num_gpu_blocks="10000000"} 1.0\nvllm:num_requests_running{engine="0"} 0\n';
  const metrics = Buffer.from(
    `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${metricsBody.length}\r\n\r\n${metricsBody}`,
  );
  const frame = (text: string) =>
    Buffer.from(`${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`);
  const sseHead = Buffer.from(
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
  );
  const chunk = frame(
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "tok" }, finish_reason: null }] })}\n\n`,
  );
  const group = Buffer.concat(Array.from({ length: SSE_GROUP }, () => chunk));
  const end = Buffer.from("0\r\n\r\n");
  const tail = (n: number, usage: boolean) =>
    Buffer.concat([
      frame(
        usage
          ? `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: usageOf(n) })}\n\ndata: [DONE]\n\n`
          : "data: [DONE]\n\n",
      ),
      end,
    ]);
  const longTail = tail(longStream, true);

  // A short streamed answer of n tokens (8 for the small plain requests: what the router asks
  // for when its client wants a plain answer), usage and [DONE] included, in one buffer.
  const shortStreams = new Map<string, Buffer>();
  const shortStream = (n: number, usage: boolean) => {
    const key = `${n}/${usage}`;
    let s = shortStreams.get(key);
    if (s) return s;
    s = Buffer.concat([
      sseHead,
      frame(
        `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }] })}\n\n`,
      ),
      ...Array.from({ length: n - 1 }, () => chunk),
      frame(
        `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "ok" }, logprobs: null, finish_reason: "stop" }] })}\n\n`,
      ),
      tail(n, usage),
    ]);
    shortStreams.set(key, s);
    return s;
  };
  const stream = (sock: Socket) => {
    sock.write(sseHead);
    stats.events += longStream + 2;
    // Events leave in groups, as from a busy engine: the router, not this stand-in, should
    // be what limits the measured rate.
    let i = 0;
    const pump = () => {
      while (i < longStream) {
        i += SSE_GROUP;
        stats.writes++;
        if (!sock.write(group)) return void sock.once("drain", pump);
      }
      stats.writes++;
      sock.write(longTail);
    };
    pump();
  };
  const MAX_TOKENS = Buffer.from('"max_tokens":');
  const maxTokensOf = (body: Buffer) => {
    let i = body.indexOf(MAX_TOKENS);
    if (i < 0) return 8;
    let n = 0;
    for (i += MAX_TOKENS.length; body[i] >= 0x30 && body[i] <= 0x39; i++)
      n = n * 10 + body[i] - 0x30;
    return Math.max(1, n);
  };

  const server = createNetServer((sock) => {
    sock.setNoDelay(true);
    let buf: Buffer = Buffer.alloc(0);
    sock.on("error", () => {});
    sock.on("data", (d: Buffer) => {
      buf = buf.length > 0 ? Buffer.concat([buf, d]) : d;
      for (;;) {
        const headEnd = buf.indexOf("\r\n\r\n");
        if (headEnd < 0) return;
        const head = buf.toString("latin1", 0, headEnd);
        const len = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        const end = headEnd + 4 + len;
        if (buf.length < end) return;
        const body = buf.subarray(headEnd + 4, end);
        buf = buf.subarray(end);
        if (head.startsWith("GET /metrics")) {
          sock.write(metrics);
          continue;
        }
        stats.requests++;
        const n = maxTokensOf(body);
        if (!body.includes('"stream":true')) {
          stats.writes++;
          sock.write(answer(n));
        } else if (n === longStream) stream(sock);
        else {
          const usage = body.includes('"include_usage":true');
          stats.events += n + (usage ? 3 : 2);
          stats.writes++;
          sock.write(shortStream(n, usage));
        }
      }
    });
  });
  const sockets = new Set<Socket>();
  server.on("connection", (sock) => {
    sockets.add(sock);
    sock.once("close", () => sockets.delete(sock));
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        stats: () => ({ ...stats }),
        close: () =>
          new Promise<void>((done) => {
            for (const sock of sockets) sock.destroy();
            server.close(() => done());
          }),
      }),
    ),
  );
}
