/**
 * The program each plugin subprocess runs. The host passes it to `deno run` as a `data:` URL built from
 * `pluginMain.toString()`, so it must be self-contained: no imports and no reference to anything outside
 * the function body. That keeps it runnable from `deno bundle` and `deno compile` builds, where this file
 * does not exist on disk, and means the subprocess needs no read permission for Hermes' own code.
 *
 * Protocol: line-delimited JSON-RPC 2.0 on stdin/stdout. The host sends `init`, then `hook`, `command` and
 * `tool` requests; the plugin sends `state.*` requests and `log` notifications. The process exits when its
 * stdin closes, so it cannot outlive the host.
 */
export function pluginMain(): void {
  type Message = {
    id?: number;
    method?: string;
    params?: Record<string, unknown>;
    result?: unknown;
    error?: { message: string };
  };
  type Handler = (...args: unknown[]) => unknown;

  const encoder = new TextEncoder();
  const send = (message: Message) => {
    const bytes = encoder.encode(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
    try {
      for (let written = 0; written < bytes.length;) {
        written += Deno.stdout.writeSync(bytes.subarray(written));
      }
    } catch {
      Deno.exit(0); // the host is gone
    }
  };
  const describe = (error: unknown) =>
    error instanceof Error
      ? (error.name && error.name !== "Error" ? `${error.name}: ${error.message}` : error.message)
      : String(error);

  // stdout carries only the protocol; the host prefixes stderr lines with the plugin name.
  const toStderr = (...data: unknown[]) => console.error(...data);
  console.log =
    console.info =
    console.debug =
    console.dirxml =
      toStderr;
  console.dir = (item: unknown, options?: Deno.InspectOptions) => console.error(Deno.inspect(item, options));

  const log = (level: string) => (message: unknown) =>
    send({ method: "log", params: { level, message: String(message) } });
  globalThis.addEventListener("error", (event) => {
    event.preventDefault();
    log("error")(`uncaught ${describe(event.error)}`);
  });
  globalThis.addEventListener("unhandledrejection", (event) => {
    event.preventDefault();
    log("error")(`unhandled rejection: ${describe(event.reason)}`);
  });

  let nextId = 1;
  const waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  const request = (method: string, params: Record<string, unknown>) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      send({ id, method, params });
    });

  const hooks = new Map<string, Handler>();
  const commands = new Map<string, { description: string; handler: Handler }>();
  const tools = new Map<string, { description: string; parameters: unknown; handler: Handler }>();
  let registering = true;
  const checkRegistration = (kind: string, name: unknown, table: Map<string, unknown>, handler: unknown) => {
    if (!registering) throw new Error(`register${kind}("${name}") must be called during register()`);
    if (typeof name !== "string") throw new Error(`register${kind}: the name must be a string`);
    if (table.has(name)) throw new Error(`register${kind}: "${name}" is already registered`);
    if (typeof handler !== "function") {
      throw new Error(`register${kind}("${name}"): the handler must be a function`);
    }
  };

  const context = (name: string, config: Record<string, unknown>) => ({
    name,
    config,
    log: { info: log("info"), warn: log("warn"), error: log("error") },
    state: {
      get: async (key: string) => ((await request("state.get", { key })) as unknown[])[0],
      set: async (key: string, value: unknown) => void await request("state.set", { key, value }),
      delete: (key: string) => request("state.delete", { key }),
      list: (prefix?: string) => request("state.list", prefix === undefined ? {} : { prefix }),
    },
    registerHook(hook: string, handler: Handler) {
      checkRegistration("Hook", hook, hooks, handler);
      hooks.set(hook, handler);
    },
    registerCommand(command: string, definition: { description?: unknown; handler?: Handler }) {
      checkRegistration("Command", command, commands, definition?.handler);
      commands.set(command, {
        description: String(definition.description ?? ""),
        handler: definition.handler!,
      });
    },
    registerTool(
      tool: string,
      definition: { description?: unknown; parameters?: unknown; handler?: Handler },
    ) {
      checkRegistration("Tool", tool, tools, definition?.handler);
      const parameters = definition.parameters ?? { type: "object", properties: {} };
      tools.set(tool, {
        description: String(definition.description ?? ""),
        parameters,
        handler: definition.handler!,
      });
    },
  });

  // Where in the plugin's code a load error happened (its first stack frame in a file).
  const located = (error: unknown) => {
    const frame = error instanceof Error
      ? /\(?(file:\/\/[^\s)]+:\d+:\d+)/.exec(error.stack ?? "")?.[1]
      : undefined;
    return frame && !describe(error).includes(frame) ? `${describe(error)} (at ${frame})` : describe(error);
  };

  const init = async (params: Record<string, unknown>) => {
    const module = await import(String(params.entry)).catch((error) => {
      throw new Error(located(error));
    });
    if (typeof module.register !== "function") {
      throw new Error("the module does not export a register(ctx) function");
    }
    try {
      await module.register(context(String(params.name), (params.config ?? {}) as Record<string, unknown>));
    } catch (error) {
      throw new Error(`register() threw: ${located(error)}`);
    } finally {
      registering = false;
    }
    return {
      hooks: [...hooks.keys()],
      commands: [...commands].map(([name, c]) => ({ name, description: c.description })),
      tools: [...tools].map(([name, t]) => ({ name, description: t.description, parameters: t.parameters })),
    };
  };

  const asText = (value: unknown) =>
    typeof value === "string" ? value : value === undefined || value === null ? "" : JSON.stringify(value);

  const methods: Record<string, (params: Record<string, unknown>) => unknown> = {
    init,
    hook(params) {
      const hook = String(params.hook);
      // Only pre_* hooks return something the host uses.
      const keep = (result: unknown) => hook.startsWith("pre_") && result !== undefined ? result : null;
      const result = hooks.get(hook)?.(params.payload);
      return isThenable(result) ? result.then(keep) : keep(result);
    },
    async command(params) {
      const command = commands.get(String(params.name));
      if (!command) throw new Error(`no command "${params.name}"`);
      return asText(await command.handler(String(params.args ?? ""), params.context));
    },
    async tool(params) {
      const tool = tools.get(String(params.name));
      if (!tool) throw new Error(`no tool "${params.name}"`);
      return asText(await tool.handler(params.args, params.context));
    },
  };

  const isThenable = (value: unknown): value is PromiseLike<unknown> =>
    typeof (value as PromiseLike<unknown> | null)?.then === "function";

  const receive = (message: Message) => {
    if (message.method === undefined) {
      const call = waiting.get(message.id!);
      waiting.delete(message.id!);
      if (message.error) call?.reject(new Error(message.error.message));
      else call?.resolve(message.result);
      return;
    }
    const method = methods[message.method];
    const fail = (error: unknown) => send({ id: message.id!, error: { message: describe(error) } });
    const answer = (result: unknown) => {
      try {
        send({ id: message.id!, result });
      } catch (error) {
        fail(error); // not JSON
      }
    };
    try {
      if (!method) throw new Error(`unknown method "${message.method}"`);
      // Synchronous handlers are answered at once, without a trip through the microtask queue.
      const result = method(message.params ?? {});
      if (isThenable(result)) result.then(answer, fail);
      else answer(result);
    } catch (error) {
      fail(error);
    }
  };

  (async () => {
    // Deno.stdin.read is much cheaper per message than iterating Deno.stdin.readable.
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(64 * 1024);
    let buffered = "";
    for (;;) {
      const count = await Deno.stdin.read(buffer);
      if (count === null) Deno.exit(0);
      buffered += decoder.decode(buffer.subarray(0, count), { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (!line.trim()) continue;
        try {
          receive(JSON.parse(line));
        } catch (error) {
          log("error")(`unreadable message from the host: ${describe(error)}`);
        }
      }
    }
  })();
}
