/**
 * One MCP server of a session, through the SDK's client: started (spawned or reached, `initialize` within
 * startup_timeout, tools listed), called (per-call timeout that cancels the request, progress forwarded,
 * the session's signal honoured), restarted at most once after it dies, and stopped with the session.
 * A server that dies mid-call turns that call into a tool error; the run goes on.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { McpServerEntry } from "../config/job_schema.ts";
import { parseDuration } from "../core/duration.ts";
import { errorMessage } from "../core/errors.ts";
import { VERSION } from "../core/version.ts";
import type { McpCallResult } from "./convert.ts";
import { createTransport, type LaunchContext } from "./launch.ts";

export const DEFAULT_CALL_TIMEOUT = "60s";
export const DEFAULT_STARTUP_TIMEOUT = "30s";
/** The server's last stderr lines, quoted when it fails. */
const STDERR_KEPT = 5;

export interface McpToolInfo {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
}

export interface CallOptions {
  signal: AbortSignal;
  onProgress?: (
    progress: { progress: number; total?: number | undefined; message?: string | undefined },
  ) => void;
}

export class McpConnection {
  readonly name: string;
  readonly entry: McpServerEntry;
  readonly callTimeoutMs: number;
  readonly startupTimeoutMs: number;
  #context: Omit<LaunchContext, "onStderr">;
  #client: Client | null = null;
  #closed = true;
  #stopped = false;
  #restarts = 0;
  #stderr: string[] = [];
  #tools: McpToolInfo[] = [];

  constructor(name: string, entry: McpServerEntry, context: Omit<LaunchContext, "onStderr">) {
    this.name = name;
    this.entry = entry;
    this.#context = context;
    this.callTimeoutMs = parseDuration(entry.timeout ?? DEFAULT_CALL_TIMEOUT);
    this.startupTimeoutMs = parseDuration(entry.startup_timeout ?? DEFAULT_STARTUP_TIMEOUT);
  }

  get tools(): readonly McpToolInfo[] {
    return this.#tools;
  }

  /** Starts the server and lists its tools; throws with the reason (and its stderr) when it cannot. */
  async start(): Promise<void> {
    const client = new Client({ name: "hermes", version: VERSION });
    const transport = await createTransport(this.entry, {
      ...this.#context,
      onStderr: (line) => {
        this.#stderr.push(line);
        if (this.#stderr.length > STDERR_KEPT) this.#stderr.shift();
      },
    });
    client.onclose = () => {
      this.#closed = true;
    };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `it did not answer initialize within ${this.entry.startup_timeout ?? DEFAULT_STARTUP_TIMEOUT}`,
            ),
          ),
        this.startupTimeoutMs,
      );
    });
    try {
      this.#closed = false;
      await Promise.race([client.connect(transport, { timeout: this.startupTimeoutMs }), deadline]);
      // tools/list is paginated: follow nextCursor until the server has listed them all.
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      do {
        const page = await Promise.race([
          client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: this.startupTimeoutMs }),
          deadline,
        ]);
        for (const tool of page.tools as { name: string; description?: string; inputSchema: unknown }[]) {
          tools.push({
            name: tool.name,
            description: tool.description,
            inputSchema: tool.inputSchema as Record<string, unknown>,
          });
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      this.#tools = tools;
      this.#client = client;
    } catch (error) {
      this.#closed = true;
      // A server that never answered will not heed a closed stdin either: do not wait 2 s for it.
      const pid = (transport as { pid?: number | null }).pid;
      if (pid) {
        try {
          Deno.kill(pid, "SIGTERM");
        } catch {
          // already gone
        }
      }
      await client.close().catch(() => {});
      throw new Error(this.#withStderr(errorMessage(error)));
    } finally {
      clearTimeout(timer);
    }
  }

  async call(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<McpCallResult> {
    if (this.#stopped) throw new Error(`MCP server "${this.name}" is stopped`);
    if (this.#closed) {
      if (this.#restarts >= 1) {
        throw new Error(
          `MCP server "${this.name}" exited and was already restarted once; its tools are unavailable for the ` +
            "rest of this session",
        );
      }
      this.#restarts++;
      this.#stderr = [];
      try {
        await this.start();
      } catch (error) {
        throw new Error(
          `MCP server "${this.name}" exited and could not be restarted: ${errorMessage(error)}`,
        );
      }
    }
    try {
      return await this.#client!.callTool({ name: tool, arguments: args }, undefined, {
        signal: options.signal,
        timeout: this.callTimeoutMs,
        ...(options.onProgress ? { onprogress: options.onProgress } : {}),
      }) as McpCallResult;
    } catch (error) {
      options.signal.throwIfAborted();
      const code = (error as { code?: unknown }).code;
      if (this.#closed) {
        throw new Error(this.#withStderr(`MCP server "${this.name}" exited during the call`));
      }
      if (code === -32001) {
        throw new Error(
          `${tool} on MCP server "${this.name}" took longer than ${
            this.entry.timeout ?? DEFAULT_CALL_TIMEOUT
          }; ` +
            "the request was cancelled",
        );
      }
      throw error;
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    const client = this.#client;
    this.#client = null;
    await client?.close().catch(() => {});
  }

  #withStderr(message: string): string {
    return this.#stderr.length ? `${message} (stderr: ${this.#stderr.join(" | ")})` : message;
  }
}
