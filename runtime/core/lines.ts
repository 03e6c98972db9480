/**
 * Newline-delimited framing for stdio protocols: a byte-level line splitter with a size limit, and a writer
 * that coalesces every line produced in one tick into a single write. A closed peer (BrokenPipe) is reported
 * once and later lines are dropped, so a client that stops reading never hangs the process.
 */

const NEWLINE = 10;
const CARRIAGE_RETURN = 13;

export interface LineReaderOptions {
  /** Longest accepted line in bytes (without the newline). */
  maxBytes: number;
  /** Called synchronously for each complete, non-blank line. */
  onLine(line: string): void;
  /** Called once per line longer than `maxBytes`, as soon as it crosses the limit; the line is discarded. */
  onOversize(bytes: number): void;
}

/** A reader with Deno's `read(buffer)` contract (`Deno.stdin`): bytes read, or null at EOF. */
export interface ByteSource {
  read(buffer: Uint8Array): Promise<number | null>;
}

const READ_BUFFER_BYTES = 64 * 1024;

/**
 * Reads `input` to its end, splitting it into lines; resolves at EOF or when `signal` aborts. A ByteSource is
 * read directly into one buffer (about 50 µs less per round trip on stdin than its ReadableStream); a pending
 * read on it cannot be interrupted, so after an abort the promise settles only when that read returns.
 */
export async function readLines(
  input: ReadableStream<Uint8Array> | ByteSource,
  options: LineReaderOptions & { signal?: AbortSignal },
): Promise<void> {
  const splitter = new LineSplitter(options);
  if (!(input instanceof ReadableStream)) {
    const buffer = new Uint8Array(READ_BUFFER_BYTES);
    while (!options.signal?.aborted) {
      const n = await input.read(buffer);
      if (n === null) break;
      if (!options.signal?.aborted) splitter.push(buffer.subarray(0, n));
    }
    if (!options.signal?.aborted) splitter.end();
    return;
  }
  const reader = input.getReader();
  const onAbort = () => reader.cancel().catch(() => {});
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    while (!options.signal?.aborted) {
      const { done, value } = await reader.read();
      if (done) break;
      splitter.push(value);
    }
    if (!options.signal?.aborted) splitter.end();
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    reader.releaseLock();
  }
}

/** Incremental splitter: `push` chunks, `end` flushes a last line without a newline. */
export class LineSplitter {
  #options: LineReaderOptions;
  #decoder = new TextDecoder();
  #parts: Uint8Array[] = [];
  #partBytes = 0;
  /** Bytes of the current oversized line seen so far, or -1 while not discarding. */
  #discarded = -1;

  constructor(options: LineReaderOptions) {
    this.#options = options;
  }

  push(chunk: Uint8Array): void {
    let start = 0;
    while (start < chunk.length) {
      const end = chunk.indexOf(NEWLINE, start);
      if (end < 0) {
        this.#keep(chunk.subarray(start));
        return;
      }
      this.#finish(chunk.subarray(start, end));
      start = end + 1;
    }
  }

  end(): void {
    if (this.#partBytes > 0 || this.#discarded >= 0) this.#finish(new Uint8Array(0));
  }

  #keep(segment: Uint8Array): void {
    if (this.#discarded >= 0) {
      this.#discarded += segment.length;
      return;
    }
    if (this.#partBytes + segment.length > this.#options.maxBytes) {
      this.#discarded = this.#partBytes + segment.length;
      this.#parts = [];
      this.#partBytes = 0;
      this.#options.onOversize(this.#discarded);
      return;
    }
    // Copy: the stream may reuse its buffer for the next chunk.
    this.#parts.push(segment.slice());
    this.#partBytes += segment.length;
  }

  #finish(segment: Uint8Array): void {
    if (this.#discarded >= 0) {
      this.#discarded = -1;
      return;
    }
    let bytes = segment;
    if (this.#partBytes > 0) {
      bytes = new Uint8Array(this.#partBytes + segment.length);
      let offset = 0;
      for (const part of this.#parts) {
        bytes.set(part, offset);
        offset += part.length;
      }
      bytes.set(segment, offset);
      this.#parts = [];
      this.#partBytes = 0;
    }
    if (bytes.length > this.#options.maxBytes) {
      this.#options.onOversize(bytes.length);
      return;
    }
    let length = bytes.length;
    if (length > 0 && bytes[length - 1] === CARRIAGE_RETURN) length--;
    const line = this.#decoder.decode(length === bytes.length ? bytes : bytes.subarray(0, length));
    if (line.trim() !== "") this.#options.onLine(line);
  }
}

/** Where encoded lines go: `Deno.stdout` or any `{write}` that may write partially. */
export interface ByteSink {
  write(bytes: Uint8Array): Promise<number>;
}

/**
 * Queues lines and writes everything queued in one tick with one write call; while a write is in flight,
 * new lines accumulate and go out together in the next one.
 */
export class LineWriter {
  #sink: ByteSink;
  #onClosed: (error: unknown) => void;
  #encoder = new TextEncoder();
  #queue: string[] = [];
  /** The current (or last) drain; it resolves once the queue is empty. */
  #drained: Promise<void> = Promise.resolve();
  #draining = false;
  #scheduled = false;
  #closed = false;

  constructor(sink: ByteSink, options: { onClosed?: (error: unknown) => void } = {}) {
    this.#sink = sink;
    this.#onClosed = options.onClosed ?? (() => {});
  }

  /** True once the peer stopped reading (BrokenPipe or another write error); later lines are dropped. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Queues `text` (one JSON message, no newline) for writing. */
  line(text: string): void {
    if (this.#closed) return;
    this.#queue.push(text);
    if (!this.#draining && !this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(() => {
        this.#scheduled = false;
        this.#start();
      });
    }
  }

  /** Resolves when every line queued so far has been written (or dropped because the peer is gone). */
  flush(): Promise<void> {
    this.#start();
    return this.#drained;
  }

  #start(): void {
    if (!this.#draining && this.#queue.length > 0 && !this.#closed) this.#drained = this.#drain();
  }

  async #drain(): Promise<void> {
    // `#draining` is cleared in the same tick as the last empty-queue check, so a line queued after it
    // always schedules a new drain.
    this.#draining = true;
    try {
      while (this.#queue.length > 0 && !this.#closed) {
        const text = this.#queue.length === 1 ? this.#queue[0]! + "\n" : this.#queue.join("\n") + "\n";
        this.#queue = [];
        const bytes = this.#encoder.encode(text);
        try {
          let written = 0;
          while (written < bytes.length) written += await this.#sink.write(bytes.subarray(written));
        } catch (error) {
          this.#closed = true;
          this.#queue = [];
          this.#onClosed(error);
        }
      }
    } finally {
      this.#draining = false;
    }
  }
}
