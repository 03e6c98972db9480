/**
 * One plugin subprocess and its line-delimited JSON-RPC channel: calls with ids and per-call timeouts,
 * requests from the plugin (`state.*`), `log` notifications, and plugin stderr prefixed with its name.
 * A call that times out, a crash, or a heap overrun kills the process (SIGKILL) and fails it for good.
 */
import { formatDuration } from "../runtime/core/duration.ts";
import { errorMessage } from "../runtime/core/errors.ts";
import type { Logger } from "../runtime/core/log.ts";
import { readLines } from "../runtime/core/lines.ts";
import { pluginMain } from "./_plugin_main.ts";
import { type Redactor, redactValue } from "../runtime/core/redact.ts";
import { watchMemory } from "./_memory_watch.ts";
import type { PluginCommand } from "./sandbox_policy.ts";

/** The subprocess's main module: the self-contained runner, as a `data:` URL (see _plugin_main.ts). */
const RUNNER_URL = `data:application/javascript;base64,${btoa(`(${pluginMain.toString()})();\n`)}`;
const OUT_OF_MEMORY = /out of memory|heap limit/i;
/** A line longer than this is not a protocol message; the plugin is misbehaving. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/**
 * Deno 2.9 otherwise prepends a `node` shim directory (inside DENO_DIR) to the PATH of every process it
 * starts; the plugin's environment is to hold the granted variables and nothing that says where Hermes lives.
 */
export const RUNTIME_ENV = { DENO_DISABLE_NODE_SHIM: "1" };

/** The plugin's handler threw or rejected; the process is healthy. */
export class PluginCallError extends Error {
  override name = "PluginCallError";
}

/** The process is gone (timed out, crashed, over its heap, misbehaved); `hook` names the call in flight. */
export class PluginFailure extends Error {
  override name = "PluginFailure";
  readonly hook: string | null;
  readonly session_id: string | undefined;
  constructor(message: string, during?: { label: string; session_id?: string | undefined }) {
    super(message);
    this.hook = during?.label ?? null;
    this.session_id = during?.session_id;
  }
}

/** The plugin runner's deno command line: the runtime flags, the grant's `--allow-*` flags, the heap cap. */
export function pluginArgv(
  deno_path: string,
  options: { flags: readonly string[]; max_memory_mb: number },
): string[] {
  return [
    deno_path,
    "run",
    "--no-prompt",
    "--no-npm",
    "--no-remote",
    "--no-config",
    "--no-lock",
    "--unstable-lazy-dynamic-imports",
    `--v8-flags=--max-old-space-size=${options.max_memory_mb}`,
    ...options.flags,
    RUNNER_URL,
  ];
}

export interface SpawnOptions {
  /** What to spawn (`pluginCommand`: `pluginArgv` in the sandbox, or on the host); env is all it gets. */
  command: PluginCommand;
  max_memory_mb: number;
  /** Receives the plugin's console output and `ctx.log` lines (already prefixed). */
  log: Logger;
  /** Answers the plugin's requests; rejects to answer with an error. */
  serve(method: string, params: Record<string, unknown>): Promise<unknown>;
  /** Called once when the process fails outside `stop()`. */
  onFailure(failure: PluginFailure): void;
  /** Replaces secrets in every payload sent to the plugin. */
  redact?: Redactor;
}

export interface CallOptions {
  timeout_ms: number;
  /** Names the call in errors and `plugin.error` events (`pre_llm_call`, `command /whoami`, …). */
  label: string;
  session_id?: string;
  signal?: AbortSignal;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
  options: CallOptions;
  /** performance.now() by which the answer must arrive. */
  deadline: number;
}

type Message = {
  jsonrpc?: string;
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: { message?: string };
};

export class PluginProcess {
  readonly pid: number;
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #options: SpawnOptions;
  #pending = new Map<number, Pending>();
  #nextId = 1;
  #failure: PluginFailure | undefined;
  #stopping = false;
  #sawOutOfMemory = false;
  #pumps: Promise<void>;
  /** Stops reading the pipes when a grandchild keeps them open after the plugin exited. */
  #stopReading = new AbortController();
  #encoder = new TextEncoder();
  // One timer for all calls, armed for the earliest deadline: cheaper than a timer per call.
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  #deadlineAt = Infinity;
  #stopWatch: () => Promise<void>;

  constructor(options: SpawnOptions) {
    this.#options = options;
    const { command } = options;
    this.#child = new Deno.Command(command.cmd, {
      args: command.args,
      cwd: command.cwd,
      clearEnv: true,
      env: { ...command.env, ...RUNTIME_ENV },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.pid = this.#child.pid;
    this.#writer = this.#child.stdin.getWriter();
    this.#pumps = Promise.all([this.#readStdout(), this.#readStderr()]).then(() => {});
    this.#stopWatch = watchMemory(this.pid, options.max_memory_mb * 1024 ** 2, (bytes) =>
      this.#fail(
        `the plugin process exceeded its memory limit (max_memory ${options.max_memory_mb} MiB): it held ` +
          `${Math.round(bytes / 1024 ** 2)} MiB`,
      ));
    const bridge = command.bridge;
    // A bridge that cannot start leaves the plugin without any route (fail closed); fail it, saying why.
    bridge?.attach().catch((error) => this.#fail(errorMessage(error)));
    this.#child.status.then(async (status) => {
      this.#stopWatch();
      await bridge?.close();
      return this.#exited(status);
    });
  }

  get failure(): PluginFailure | undefined {
    return this.#failure;
  }

  call(method: string, params: Record<string, unknown>, options: CallOptions): Promise<unknown> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const signal = options.signal;
      const onAbort = () => this.#settle(id)?.reject(signal!.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      const deadline = performance.now() + options.timeout_ms;
      if (deadline < this.#deadlineAt) this.#armDeadline(deadline);
      this.#pending.set(id, {
        options,
        deadline,
        resolve: (value) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(value);
        },
        reject: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      });
      this.#send({
        id,
        method,
        params: this.#options.redact ? redactValue(params, this.#options.redact) : params,
      });
    });
  }

  /** Closes stdin (the plugin exits), waits up to `grace_ms`, then SIGKILLs; resolves when all is closed. */
  async stop(grace_ms = 500): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#deadlineTimer);
    for (const [id, call] of this.#pending) {
      this.#settle(id);
      call.reject(new PluginFailure("the plugin host stopped", call.options));
    }
    await this.#writer.close().catch(() => {});
    let timer: ReturnType<typeof setTimeout> | undefined;
    const exited = await Promise.race([
      this.#child.status.then(() => true),
      new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), grace_ms)),
    ]);
    clearTimeout(timer);
    if (!exited) this.#kill();
    await this.#child.status;
    await this.#options.command.bridge?.close();
    await this.#stopWatch();
    // A grandchild (with a `run` grant) may have inherited the pipes and keep them open.
    const drained = await Promise.race([
      this.#pumps.then(() => true),
      new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), grace_ms)),
    ]);
    clearTimeout(timer);
    if (!drained) this.#stopReading.abort();
    await this.#pumps;
  }

  #send(message: Message): void {
    const line = JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n";
    this.#writer.write(this.#encoder.encode(line)).catch(() => {}); // a dead process is noticed by #exited
  }

  #settle(id: number): Pending | undefined {
    const call = this.#pending.get(id);
    this.#pending.delete(id);
    return call;
  }

  #armDeadline(at: number): void {
    clearTimeout(this.#deadlineTimer);
    this.#deadlineAt = at;
    this.#deadlineTimer = setTimeout(() => this.#checkDeadlines(), Math.max(0, at - performance.now()));
    Deno.unrefTimer(this.#deadlineTimer as unknown as number); // an idle plugin must not keep the host alive
  }

  #checkDeadlines(): void {
    this.#deadlineTimer = undefined;
    this.#deadlineAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const call of this.#pending.values()) {
      if (call.deadline <= now) {
        const { label, timeout_ms } = call.options;
        return this.#fail(`did not answer ${label} within ${formatDuration(timeout_ms)}`, call.options);
      }
      next = Math.min(next, call.deadline);
    }
    if (next !== Infinity) this.#armDeadline(next);
  }

  #kill(): void {
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // already exited
    }
  }

  /** Kills the process and fails every call in flight; the first failure wins. */
  #fail(message: string, during?: CallOptions): void {
    if (this.#failure || this.#stopping) return;
    const oldest = during ?? this.#pending.values().next().value?.options;
    const failure = new PluginFailure(message, oldest);
    this.#failure = failure;
    clearTimeout(this.#deadlineTimer);
    this.#kill();
    for (const [id, call] of this.#pending) {
      this.#settle(id);
      call.reject(failure);
    }
    this.#options.onFailure(failure);
  }

  async #exited(status: Deno.CommandStatus): Promise<void> {
    if (this.#failure || this.#stopping) return;
    // stderr tells whether the heap ran out; a grandchild may hold the pipes open, so wait briefly.
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.#pumps, new Promise((resolve) => timer = setTimeout(resolve, 200))]);
    clearTimeout(timer);
    const how = this.#sawOutOfMemory
      ? `exceeded its memory limit (max_memory ${this.#options.max_memory_mb} MiB)`
      : status.signal
      ? `was killed by ${status.signal}`
      : `exited unexpectedly with code ${status.code}`;
    this.#fail(`the plugin process ${how}`);
  }

  #receive(message: Message): void {
    if (message.method !== undefined) {
      if (message.method === "log") return this.#logLine(message.params);
      const id = message.id!;
      Promise.resolve().then(() => this.#options.serve(message.method!, message.params ?? {})).then(
        (result) => this.#send({ id, result }),
        (error) => this.#send({ id, error: { message: errorMessage(error) } }),
      );
      return;
    }
    const call = this.#settle(message.id!);
    if (!call) return; // answered after its timeout or abort
    if (message.error) call.reject(new PluginCallError(String(message.error.message ?? "unknown error")));
    else call.resolve(message.result);
  }

  #logLine(params: Record<string, unknown> | undefined): void {
    const level = params?.level === "error" ? "error" : params?.level === "warn" ? "warn" : "info";
    // One line per call: a newline in the text must not forge a host log line of its own.
    this.#options.log[level](oneLogLine(String(params?.message ?? "")));
  }

  #readStdout(): Promise<void> {
    return readLines(this.#child.stdout, {
      maxBytes: MAX_MESSAGE_BYTES,
      signal: this.#stopReading.signal,
      onLine: (line) => {
        let message: Message | undefined;
        if (line.startsWith("{")) {
          try {
            message = JSON.parse(line);
          } catch {
            // not protocol: printed by the plugin (console.table, Deno.stdout)
          }
        }
        if (message?.jsonrpc === "2.0") this.#receive(message);
        else this.#options.log.info(oneLogLine(line));
      },
      onOversize: () => this.#fail(`sent an oversized message (over ${MAX_MESSAGE_BYTES} bytes)`),
    });
  }

  #readStderr(): Promise<void> {
    return readLines(this.#child.stderr, {
      maxBytes: MAX_MESSAGE_BYTES,
      signal: this.#stopReading.signal,
      onLine: (line) => {
        if (OUT_OF_MEMORY.test(line)) this.#sawOutOfMemory = true;
        this.#options.log.info(oneLogLine(line));
      },
      onOversize: () => {},
    });
  }
}

/** Control characters (newlines, carriage returns, escape sequences) written as escapes, JSON-style. */
export function oneLogLine(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\u0000-\u0008\u000a-\u001f\u007f\u2028\u2029]/g, (c) => {
    if (c === "\n") return "\\n";
    if (c === "\r") return "\\r";
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
}
