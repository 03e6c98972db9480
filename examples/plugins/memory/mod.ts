/**
 * The memory plugin: project rules survive compaction. The rules come from `config.rules` or a notes file
 * (read fresh each time, so edits apply at once). With `every_turn: false` they are injected on a
 * session's first model call and on the first call after each compaction, which may have summarised
 * them away. Types are inline: a plugin may import nothing outside its own directory.
 */
interface State {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<boolean>;
}
interface Context {
  config: { rules?: string; file?: string; every_turn?: boolean };
  state: State;
  log: { warn(message: string): void };
  registerHook(
    name: "pre_llm_call",
    handler: (e: { session_id: string; turn: number }) => Promise<string>,
  ): void;
  registerHook(name: "post_compaction", handler: (e: { session_id: string }) => Promise<void>): void;
  registerHook(name: "on_session_delete", handler: (e: { deleted_ids: string[] }) => Promise<void>): void;
}

export function register(ctx: Context): void {
  const everyTurn = ctx.config.every_turn ?? true;

  const rules = async (): Promise<string> => {
    if (ctx.config.rules !== undefined) return ctx.config.rules.trim();
    const file = ctx.config.file ?? "./notes/rules.md";
    try {
      return (await Deno.readTextFile(file)).trim();
    } catch (error) {
      ctx.log.warn(`cannot read ${file}: ${error instanceof Error ? error.message : error}`);
      return "";
    }
  };

  // `seen:<session>`: rules were injected at least once; `stale:<session>`: a compaction happened since.
  ctx.registerHook("pre_llm_call", async ({ session_id }) => {
    const due = everyTurn || !(await ctx.state.get(`seen:${session_id}`)) ||
      Boolean(await ctx.state.get(`stale:${session_id}`));
    if (!due) return "";
    const text = await rules();
    if (!text) return "";
    if (!everyTurn) {
      await ctx.state.set(`seen:${session_id}`, true);
      await ctx.state.delete(`stale:${session_id}`);
    }
    return `Project rules (keep following them):\n${text}`;
  });

  ctx.registerHook("post_compaction", async ({ session_id }) => {
    await ctx.state.set(`stale:${session_id}`, true);
  });

  ctx.registerHook("on_session_delete", async ({ deleted_ids }) => {
    for (const id of deleted_ids) {
      await ctx.state.delete(`seen:${id}`);
      await ctx.state.delete(`stale:${id}`);
    }
  });
}
