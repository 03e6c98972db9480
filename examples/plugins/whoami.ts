/**
 * A single-module plugin: the `/whoami` slash command reports the session and where the command came from.
 * It needs no permissions. Types are inline because a plugin may import nothing outside its own directory
 * (plugins/sdk.ts has the full PluginContext type to copy).
 */
interface Context {
  registerCommand(
    name: string,
    definition: {
      description: string;
      handler(args: string, c: { session_id: string; source: string }): string;
    },
  ): void;
}

export function register(ctx: Context): void {
  ctx.registerCommand("whoami", {
    description: "Show the current session id and the command's source",
    handler: (_args, c) => `session ${c.session_id} via ${c.source}`,
  });
}
