/**
 * `hermes sessions compact ID [--focus TEXT] [--json]`: a forced compaction (like `/compress`) of a stored
 * session with the model and compaction settings it was started with. Safe next to a running session: the
 * compaction lease and the commit's watermark keep whatever that run appends meanwhile. `post_compaction`
 * reaches config.yaml's plugins and the stored job's own (docs/compaction.md), as it would in a run.
 * Exit 0 when the transcript changed or there was nothing to do (the note says why), 1 when it failed or a
 * plugin could not be told, 2 when the stored job is beyond the trust policy in force.
 */
import { parseCommandArgs } from "../_cli.ts";
import type { Hooks } from "../../runtime/core/hooks.ts";
import type { UserConfig } from "../../runtime/config/job_schema.ts";
import type { App } from "../../runtime/app/mod.ts";
import { cliApp } from "../_app.ts";
import { exactlyOneId, type SessionsContext } from "./_context.ts";
import { withGlobalHooks } from "./_hooks.ts";
import { bothHooks, jobHooks } from "./_job_hooks.ts";

const COMMAND = "sessions compact";

export async function compact(ctx: SessionsContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(COMMAND, ctx.args);
  const ref = exactlyOneId(COMMAND, positionals);
  const { cli } = ctx;
  return await withGlobalHooks(cli, async (store, hooks) => {
    const [id] = await store.resolveSessionIds([ref], { action: "compact session" });
    // It starts the job's plugins and calls its model: the App holds the stored job to the policy in force
    // now, as a resume is.
    const app = cliApp(cli, store, { config: await policyConfig(cli) });
    const own = await jobHooks(cli, store, await app.storedJob(id!), id!);
    try {
      const code = await compactStored(ctx, { app, id: id!, hooks: bothHooks(hooks, own.hooks) }, {
        ...(values.focus !== undefined ? { focus: values.focus } : {}),
        json: values.json ?? false,
      });
      return own.failed ? Math.max(code, 1) : code;
    } finally {
      await own.close();
    }
  });
}

async function compactStored(
  ctx: SessionsContext,
  session: { app: App; id: string; hooks: Hooks },
  options: { focus?: string; json: boolean },
): Promise<number> {
  const { cli } = ctx;
  const { app, id } = session;
  const { outcome, failed } = await app.compactStored(id, {
    hooks: session.hooks,
    ...(options.focus !== undefined ? { focus: options.focus } : {}),
  });
  if (options.json) await cli.out(JSON.stringify({ session_id: id, ...outcome }) + "\n");
  else if (outcome.changed) {
    await cli.out(
      `${id}: compacted (${outcome.kind}): ${outcome.before_tokens} → ${outcome.after_tokens} tokens, ` +
        `${outcome.messages_removed} fewer messages, ${Math.round(outcome.occupancy * 100)}% of the ` +
        `compaction threshold\n`,
    );
  } else await cli.out(`${id}: nothing compacted: ${outcome.note ?? "no change"}\n`);
  return failed ? 1 : 0;
}

/** config.yaml with the trust policy in force (`--policy`, `HERMES_POLICY`, its `policy:`), if any. */
async function policyConfig(cli: SessionsContext["cli"]): Promise<UserConfig | undefined> {
  const configPath = `${cli.home}/config.yaml`;
  if (cli.policyFile === undefined && !await Deno.stat(configPath).then(() => true, () => false)) {
    return undefined;
  }
  const { loadUserConfig } = await import("../../runtime/config/job_file.ts");
  return loadUserConfig(configPath, { policy: cli.policyFile });
}
