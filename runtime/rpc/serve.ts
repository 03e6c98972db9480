/**
 * `hermes rpc` as a function: JSON-RPC 2.0 over newline-delimited input and output. Events of every open
 * session are sent as `{"jsonrpc":"2.0","method":"event","params":<event>}` notifications.
 *
 * Tool calls outside a job's allow-lists (and without the job's own `approval:`) are put to the client as a
 * server→client request `tool.approve {session_id, tool, tool_call_id, server?, args, reason, rule, subject?}` when
 * its `initialize` said `capabilities: {tool_approval: true}`; it answers `{decision: "allow" | "deny"}`.
 * An error answer, or a client that did not say so, is a deny (the model is told which rule to add).
 *
 * Ending: at end of input (or after `shutdown`) it stops reading, lets every request in flight finish and
 * delivers its response, closes the open sessions, flushes, and resolves. When the peer stops reading
 * (BrokenPipe), or `signal` aborts, running turns are interrupted at a safe point instead.
 */
import { type ByteSink, type ByteSource, LineWriter, readLines } from "../core/lines.ts";
import { App, type AppContext } from "../app/mod.ts";
import { createMethods, mapRuntimeError } from "./methods.ts";
import { RpcServer } from "./server.ts";
import type { ToolAsker } from "../tools/gate.ts";

export const DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;

export interface ServeRpcOptions extends Omit<AppContext, "source"> {
  /** `Deno.stdin` itself is read fastest (see readLines). */
  input: ReadableStream<Uint8Array> | ByteSource;
  output: ByteSink;
  version: string;
  maxLineBytes?: number;
}

export interface ServeRpcResult {
  /** Why serving stopped. */
  ended: "eof" | "shutdown" | "output_closed" | "signal";
}

export async function serveRpc(options: ServeRpcOptions): Promise<ServeRpcResult> {
  const { events, log } = options;
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const stopReading = new AbortController();
  const interrupt = new AbortController();
  let ended: ServeRpcResult["ended"] | undefined;
  const end = (why: NonNullable<typeof ended>) => {
    ended ??= why;
    stopReading.abort();
  };
  const onSignal = () => {
    end("signal");
    interrupt.abort(options.signal?.reason);
  };
  if (options.signal?.aborted) onSignal();
  options.signal?.addEventListener("abort", onSignal, { once: true });

  const writer = new LineWriter(options.output, {
    onClosed: (error) => {
      log.debug(`rpc: output closed (${error}); stopping`);
      end("output_closed");
      interrupt.abort(new DOMException("the client closed its input", "AbortError"));
    },
  });
  let clientApproves = false;
  const ask: ToolAsker = async (request) => {
    if (!clientApproves) return null;
    const { signal, ...call } = request;
    const answer = await server.request("tool.approve", call, { signal }) as { decision?: unknown } | null;
    return answer?.decision === "allow";
  };
  const { input: _input, output: _output, version, maxLineBytes: _max, ...context } = options;
  const app = new App({ ...context, source: "rpc", signal: interrupt.signal }, {
    asker: { ask, name: "the client" },
  });
  const methods = createMethods({
    app,
    version,
    maxLineBytes,
    shutdown: async () => {
      server.close();
      end("shutdown");
      await Promise.resolve(); // this request is counted as in flight from the next microtask on
      await server.idle(1);
    },
  });
  const initialize = methods.get("initialize")!;
  methods.set("initialize", {
    handler: (params, context) => {
      const capabilities = (params as { capabilities?: { tool_approval?: unknown } } | undefined)
        ?.capabilities;
      clientApproves = capabilities?.tool_approval === true;
      return initialize.handler(params, context);
    },
  });
  const server: RpcServer = new RpcServer({ methods, writer, log, mapError: mapRuntimeError });
  const unsubscribe = events.subscribe((event) => server.notify("event", event));

  const reading = readLines(options.input, {
    maxBytes: maxLineBytes,
    signal: stopReading.signal,
    onLine: (line) => server.handleLine(line),
    onOversize: (bytes) => server.oversize(bytes, maxLineBytes),
  }).then(() => end("eof"), (error) => {
    log.error(`rpc: cannot read input: ${error}`);
    end("eof");
  });
  // A pending read cannot always be interrupted (stdin); do not wait for it once reading is stopped.
  await Promise.race([
    reading,
    new Promise((resolve) => stopReading.signal.addEventListener("abort", resolve)),
  ]);
  server.close();
  try {
    await server.idle();
    await app.close();
    await writer.flush();
  } finally {
    unsubscribe();
    options.signal?.removeEventListener("abort", onSignal);
  }
  return { ended: ended ?? "eof" };
}
