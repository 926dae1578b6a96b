/**
 * Structured logs through pino: one JSON object per line on stderr (stdout stays free for
 * command output), `{"level":"info","time":"<ISO>",…fields,"msg":…}`, which log shippers and
 * `jq` read as they are; on a terminal, the same lines drawn readable by pino-pretty. A logger
 * is created once in the composition root and passed down; nothing logs at import.
 */
import { Writable } from "node:stream";
import { type DestinationStream, pino } from "pino";
import pretty from "pino-pretty";

export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Sink for finished JSON lines (no newline); stderr by default. Tests pass an array push. */
  write?: (line: string) => void;
  fields?: Record<string, unknown>;
  /**
   * Draw lines for a person (pino-pretty); default: when stderr is a terminal, and never into a
   * `write` sink unless asked.
   */
  pretty?: boolean;
}

function wrap(log: pino.Logger): Logger {
  // pino takes the fields first; maitred's call sites read message first.
  return {
    debug: (msg, fields) => log.debug(fields ?? {}, msg),
    info: (msg, fields) => log.info(fields ?? {}, msg),
    warn: (msg, fields) => log.warn(fields ?? {}, msg),
    error: (msg, fields) => log.error(fields ?? {}, msg),
    child: (fields) => wrap(log.child(fields)),
  };
}

function destination(options: LoggerOptions): DestinationStream {
  const { write } = options;
  if (write !== undefined) {
    if (options.pretty !== true) return { write: (line: string) => write(line.trimEnd()) };
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        write(chunk.toString("utf8").trimEnd());
        done();
      },
    });
    return pretty({
      destination: sink,
      sync: true,
      ignore: "pid,hostname",
      translateTime: "SYS:HH:MM:ss.l",
    });
  }
  if (options.pretty ?? process.stderr.isTTY === true) {
    return pretty({
      destination: 2,
      sync: true,
      ignore: "pid,hostname",
      translateTime: "SYS:HH:MM:ss.l",
    });
  }
  return pino.destination({ dest: 2, sync: true });
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const log = pino(
    {
      level: options.level ?? "info",
      base: options.fields ?? null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // An Error under any field is logged with its name, message and stack.
      serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
    },
    destination(options),
  );
  return wrap(log);
}

/**
 * Log bytes that may wait in memory for stderr's reader. Node's stderr is a pipe or a socket
 * under a supervisor (systemd's journal, a container runtime, a log shipper), and a write its
 * reader has not taken waits in the process's memory, without limit: a reader that stalls for
 * an hour at a busy router would hold the hour's access log. This many bytes are some 20,000
 * access lines (~400 bytes each), ten seconds of a router finishing 2,000 requests a second: a
 * shipper's hiccup loses nothing, a reader that is gone costs no more than this, and the lines
 * of the one turn that crossed it (the check is made before each batch is written).
 */
export const MAX_LOG_BUFFERED_BYTES = 8 * 1024 * 1024;

export interface BatchedLinesOptions {
  /** Bytes written and not yet taken by the reader (stderr's `writableLength`). */
  buffered?: () => number;
  /** Past this many buffered bytes, the lines of a turn are dropped and counted. */
  maxBufferedBytes?: number;
}

export interface BatchedLines {
  line: (line: string) => void;
  flush: () => void;
  /** Bytes the reader has not taken yet (0 when unknown). */
  bufferedBytes(): number;
  /** Lines dropped since the start because the reader left too much untaken. */
  droppedLines(): number;
}

/**
 * A line sink that gathers the lines logged in one turn of the event loop and hands them to
 * `write` together, in order, at the end of the turn: under load many requests end in one
 * turn, and one write of their access lines costs one syscall instead of one each (measured
 * with the access log: 80–115 µs of router CPU per request with a write per line). `flush`
 * writes what is gathered at once; call it on exit so that no line is lost. While more than
 * `maxBufferedBytes` wait for the reader, a turn's lines are dropped; the first write after
 * says how many were.
 */
export function batchedLines(
  write: (text: string) => void,
  options: BatchedLinesOptions = {},
): BatchedLines {
  const buffered = options.buffered ?? (() => 0);
  const max = options.maxBufferedBytes ?? MAX_LOG_BUFFERED_BYTES;
  let lines: string[] = [];
  let scheduled = false;
  let dropped = 0;
  /** Dropped lines the log has not said yet. */
  let unsaid = 0;
  const flush = () => {
    scheduled = false;
    if (lines.length === 0) return;
    if (buffered() >= max) {
      dropped += lines.length;
      unsaid += lines.length;
      lines = [];
      return;
    }
    if (unsaid > 0) {
      lines.unshift(
        JSON.stringify({
          level: "warn",
          time: new Date().toISOString(),
          dropped: unsaid,
          msg: "log lines dropped: stderr's reader left too much unread",
        }),
      );
      unsaid = 0;
    }
    const text = `${lines.join("\n")}\n`;
    lines = [];
    write(text);
  };
  return {
    line(line) {
      lines.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
    bufferedBytes: buffered,
    droppedLines: () => dropped,
  };
}

/** A logger that drops everything (tests, benchmarks). */
export const silentLogger: Logger = createLogger({ level: "silent", write: () => {} });
