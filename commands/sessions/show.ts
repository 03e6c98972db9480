/** `hermes sessions show ID [--all] [--json]`: a transcript (stored with its secrets replaced). */
import { parseCommandArgs } from "../_cli.ts";
import { cliApp } from "../_app.ts";
import { exactlyOneId, type SessionsContext, withStore } from "./_context.ts";
import { renderTranscript } from "./_render.ts";

const COMMAND = "sessions show";

export async function show(ctx: SessionsContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(COMMAND, ctx.args);
  const ref = exactlyOneId(COMMAND, positionals);
  const transcript = await withStore(
    ctx.cli,
    (store) => cliApp(ctx.cli, store).transcript(ref, { all: values.all ?? false }),
  );
  await ctx.cli.out(values.json ? JSON.stringify(transcript) + "\n" : renderTranscript(transcript));
  return 0;
}
