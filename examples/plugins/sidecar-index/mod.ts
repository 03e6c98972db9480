/**
 * The sidecar-index plugin: one state entry per session listing the tool calls made in it, shown by
 * `/index`, and removed by `on_session_delete` so that deleting sessions leaves nothing behind.
 */
interface Entry {
  tool: string;
  status: string;
  duration_ms: number;
}
interface Context {
  state: {
    get(key: string): Promise<unknown>;
    set(key: string, value: unknown): Promise<void>;
    delete(key: string): Promise<boolean>;
  };
  log: { info(message: string): void };
  registerHook(
    name: "post_tool_call",
    handler: (
      e: { session_id: string; tool_name: string; status: string; duration_ms: number },
    ) => Promise<void>,
  ): void;
  registerHook(
    name: "on_session_delete",
    handler: (e: { reason: string; deleted_ids: string[] }) => Promise<void>,
  ): void;
  registerCommand(
    name: string,
    definition: { description: string; handler(args: string, c: { session_id: string }): Promise<string> },
  ): void;
}

const key = (sessionId: string) => `session/${sessionId}`;

export function register(ctx: Context): void {
  const entries = async (sessionId: string) => ((await ctx.state.get(key(sessionId))) ?? []) as Entry[];

  ctx.registerHook("post_tool_call", async ({ session_id, tool_name, status, duration_ms }) => {
    await ctx.state.set(key(session_id), [...await entries(session_id), {
      tool: tool_name,
      status,
      duration_ms,
    }]);
  });

  ctx.registerHook("on_session_delete", async ({ reason, deleted_ids }) => {
    let dropped = 0;
    for (const id of deleted_ids) if (await ctx.state.delete(key(id))) dropped++;
    ctx.log.info(`${reason}: dropped the index of ${dropped} of ${deleted_ids.length} sessions`);
  });

  ctx.registerCommand("index", {
    description: "List the tool calls recorded for this session",
    handler: async (_args, { session_id }) => {
      const list = await entries(session_id);
      return `${list.length} tool calls` +
        list.map((e) => `\n- ${e.tool} (${e.status}, ${e.duration_ms} ms)`).join("");
    },
  });
}
