/** A line-oriented client of a real `hermes rpc` subprocess, for tests. */
import { MAIN, ROOT } from "./cli.ts";

export interface RpcMessage {
  jsonrpc: "2.0";
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export class RpcClient implements AsyncDisposable {
  readonly child: Deno.ChildProcess;
  /** Every parsed stdout line (responses, notifications, batch arrays), in arrival order. */
  readonly lines: unknown[] = [];
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #encoder = new TextEncoder();
  #nextId = 1;
  #waiters: { test: (line: unknown) => boolean; resolve: (line: unknown) => void }[] = [];
  #lineReader: ReadableStreamDefaultReader<string>;
  #reading: Promise<void>;
  #stderr: Promise<string>;

  constructor(options: { home: string; cwd?: string; args?: string[]; env?: Record<string, string> }) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", MAIN, "rpc", "--home", options.home, ...(options.args ?? [])],
      cwd: options.cwd ?? ROOT,
      env: { NO_COLOR: "1", ...options.env },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#writer = this.child.stdin.getWriter();
    this.#lineReader = this.child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines())
      .getReader();
    this.#reading = this.#read();
    this.#stderr = new Response(this.child.stderr).text();
  }

  async #read(): Promise<void> {
    const reader = this.#lineReader;
    while (true) {
      const { done, value: line } = await reader.read();
      if (done) return;
      const message = JSON.parse(line);
      this.lines.push(message);
      this.#waiters = this.#waiters.filter((w) => {
        if (!w.test(message)) return true;
        w.resolve(message);
        return false;
      });
    }
  }

  /** Writes raw text (one or more lines, or part of one). */
  async write(text: string): Promise<void> {
    await this.#writer.write(this.#encoder.encode(text));
  }

  /** Sends a request and resolves with its response. */
  async request(method: string, params?: unknown): Promise<RpcMessage> {
    const id = this.#nextId++;
    const response = this.waitFor((m) => (m as RpcMessage).id === id) as Promise<RpcMessage>;
    await this.send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    return await response;
  }

  /** Sends any JSON value as one line. */
  async send(message: unknown): Promise<void> {
    await this.write(JSON.stringify(message) + "\n");
  }

  /** Resolves with the first line (past or future) that passes `test`. */
  waitFor(test: (line: unknown) => boolean): Promise<unknown> {
    const seen = this.lines.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.push({ test, resolve }));
  }

  /** Events (params of `event` notifications) received so far, optionally of one session. */
  events(sessionId?: string): Record<string, unknown>[] {
    return this.lines
      .filter((m): m is RpcMessage => (m as RpcMessage).method === "event")
      .map((m) => m.params!)
      .filter((e) => sessionId === undefined || e.session_id === sessionId);
  }

  /** Stops reading the server's stdout and closes our end of the pipe. */
  async closeStdout(): Promise<void> {
    await this.#lineReader.cancel();
    await this.#reading;
  }

  /** Closes stdin (EOF) and waits for the process to exit. */
  async finish(): Promise<{ code: number; stderr: string }> {
    await this.#writer.close().catch(() => {});
    const status = await this.child.status;
    await this.#reading;
    return { code: status.code, stderr: await this.#stderr };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#writer.close().catch(() => {});
    try {
      this.child.kill("SIGKILL");
    } catch {
      // already exited
    }
    await this.child.status;
    await this.#reading.catch(() => {});
    await this.#stderr.catch(() => "");
  }
}

export function splitLines(): TransformStream<string, string> {
  let buffer = "";
  return new TransformStream({
    transform(chunk, controller) {
      buffer += chunk;
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      for (const part of parts) if (part.trim() !== "") controller.enqueue(part);
    },
    flush(controller) {
      if (buffer.trim() !== "") controller.enqueue(buffer);
    },
  });
}
