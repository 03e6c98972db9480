/**
 * `hermes sessions compactions ID [--json]`: the session's compaction report (docs/compaction.md) — passes, their
 * outcomes, hard compactions, net tokens saved and occupancy over time — from the content-free compaction
 * log, so it shows nothing of the transcript — and the share of the session's prompt tokens the provider
 * served from its prompt cache.
 */
import { parseCommandArgs } from "../_cli.ts";
import { compactionReport, renderReport } from "../../runtime/compaction/report.ts";
import { exactlyOneId, type SessionsContext, withStore } from "./_context.ts";

const COMMAND = "sessions compactions";

export async function compactions(ctx: SessionsContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(COMMAND, ctx.args);
  const ref = exactlyOneId(COMMAND, positionals);
  const report = await withStore(ctx.cli, async (store) => {
    const [id] = await store.resolveSessionIds([ref], { action: "report compactions of session" });
    const session = await store.getSession(id!);
    return compactionReport(id!, await store.compactionLog(id!), session ?? undefined);
  });
  await ctx.cli.out(values.json ? JSON.stringify(report) + "\n" : renderReport(report));
  return 0;
}
