/**
 * `hermes sessions compact ID [--focus TEXT] [--json]`: a forced compaction (like `/compress`) of a stored
 * session with the model and compaction settings it was started with. Safe next to a running session: the
 * compaction lease and the commit's watermark keep whatever that run appends meanwhile. `post_compaction`
 * reaches config.yaml's plugins and the stored job's own (docs/compaction.md), as it would in a run.
 * Exit 0 when the transcript changed or there was nothing to do (the note says why), 1 when it failed or a
 * plugin could not be told.
 */
import { parseCommandArgs } from "../_cli.ts";
import { createCompactor } from "../../runtime/compaction/mod.ts";
import { EventBus } from "../../runtime/core/events.ts";
import { currentProcess } from "../../runtime/core/process_identity.ts";
import type { Hooks } from "../../runtime/core/hooks.ts";
import { createProvider } from "../../runtime/providers/model.ts";
import { resolveModel } from "../../runtime/config/model.ts";
import { storedJob } from "../../runtime/session/stored_job.ts";
import { sessionOutlets } from "../../runtime/session/outlets.ts";
import { sessionSecrets } from "../../runtime/session/secrets.ts";
import { redactorOf } from "../../runtime/core/redact.ts";
import type { Store } from "../../runtime/store/store.ts";
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
    const job = await storedJob(store, id!);
    const own = await jobHooks(cli, store, job, id!);
    try {
      const code = await compactStored(ctx, { store, id: id!, job, hooks: bothHooks(hooks, own.hooks) }, {
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
  session: { store: Store; id: string; job: Awaited<ReturnType<typeof storedJob>>; hooks: Hooks },
  options: { focus?: string; json: boolean },
): Promise<number> {
  const { cli } = ctx;
  const { store, id, job } = session;
  const model = resolveModel(job.spec.model, { env: cli.env, dir: job.dir });
  const bus = new EventBus(cli.clock);
  let failed = false;
  bus.subscribe((event) => failed ||= event.type === "compaction.failed");
  // The summary is written, and the outcome printed, through the session's outlets, as in a run.
  const outlets = sessionOutlets(store, bus, redactorOf(sessionSecrets(cli.env, job)));
  const { events } = outlets;
  const compactor = createCompactor({
    store: outlets.store,
    provider: await createProvider(model, { env: cli.env, clock: cli.clock }),
    model: model.name,
    context_window: model.context_window,
    config: job.spec.compaction ?? {},
    events,
    hooks: session.hooks,
    clock: cli.clock,
    log: cli.log,
    identity: currentProcess(cli.host),
    // Summary calls stall by the same model.idle_timeout as the agent's own calls.
    ...(model.idle_timeout_ms ? { summary_idle_timeout_ms: model.idle_timeout_ms } : {}),
  });
  const outcome = outlets.result(
    await compactor.compact(id, {
      signal: cli.signal,
      ...(options.focus !== undefined ? { focus: options.focus } : {}),
    }),
  );
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
