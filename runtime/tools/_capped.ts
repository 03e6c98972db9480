/** Collects bytes up to a limit and remembers whether more arrived (shell output, HTTP bodies, files). */
export class CappedBytes {
  readonly limit: number;
  #chunks: Uint8Array[] = [];
  #kept = 0;
  #seen = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Adds a chunk; returns true once more than `limit` bytes were seen. */
  push(chunk: Uint8Array): boolean {
    this.#seen += chunk.length;
    const room = this.limit - this.#kept;
    if (room > 0) {
      const kept = chunk.subarray(0, room);
      this.#chunks.push(kept);
      this.#kept += kept.length;
    }
    return this.truncated;
  }

  get truncated(): boolean {
    return this.#seen > this.limit;
  }

  get bytes(): Uint8Array {
    const all = new Uint8Array(this.#kept);
    let offset = 0;
    for (const chunk of this.#chunks) {
      all.set(chunk, offset);
      offset += chunk.length;
    }
    return all;
  }

  /** The kept bytes as text, with `[output truncated at N bytes]` when more arrived. */
  text(): string {
    const text = new TextDecoder().decode(this.bytes);
    if (!this.truncated) return text;
    return `${text}\n[output truncated at ${this.limit} bytes]`;
  }
}

/** Reads a stream into `into`; stops reading (and cancels the stream) once the cap is exceeded when asked. */
export async function readCapped(
  stream: ReadableStream<Uint8Array>,
  into: CappedBytes,
  options: { stopWhenFull: boolean },
): Promise<void> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      if (into.push(value) && options.stopWhenFull) {
        await reader.cancel();
        return;
      }
    }
  } finally {
    reader.releaseLock();
  }
}
