import type { TestRouter } from "./test-router.ts";

/** A streamed chat completion read piece by piece, so a test can wait for what it expects. */
export interface StreamReader {
  res: Response;
  /** Everything read so far. */
  text: string;
  /** Reads until `pred(text)` holds; fails if the stream ends first. */
  until(pred: (text: string) => boolean): Promise<string>;
  /** Reads to the end. */
  end(): Promise<string>;
}

/** POSTs a `stream: true` chat completion; resolves once the response's head has arrived. */
export async function openStream(
  router: TestRouter,
  programId: string,
  options: { content?: string; headers?: Record<string, string> } = {},
): Promise<StreamReader> {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...options.headers },
    body: JSON.stringify({
      model: "m",
      stream: true,
      program_id: programId,
      messages: [{ role: "user", content: options.content ?? "hi" }],
    }),
  });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const s: StreamReader = {
    res,
    text: "",
    async until(pred) {
      while (!pred(s.text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before what was awaited; it read:\n${s.text}`);
        s.text += decoder.decode(value, { stream: true });
      }
      return s.text;
    },
    async end() {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return s.text;
        s.text += decoder.decode(value, { stream: true });
      }
    },
  };
  return s;
}
