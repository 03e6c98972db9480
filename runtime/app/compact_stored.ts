/**
 * A forced compaction of a stored session out of band (`hermes sessions compact`), with the model and
 * compaction settings it was started with, without opening (claiming) the session: safe next to a running
 * one, whose appends the compaction lease and the commit's watermark keep. The summary and the outcome leave
 * through the session's outlets, as in a run.
 */
import type { CompactionOutcome } from "../agent/seams.ts";
import { createCompactor } from "../compaction/mod.ts";
import { resolveModel } from "../config/model.ts";
import { EventBus } from "../core/events.ts";
import type { Hooks } from "../core/hooks.ts";
import { currentProcess } from "../core/process_identity.ts";
import { redactorOf } from "../core/redact.ts";
import { createProvider } from "../providers/create.ts";
import { sessionOutlets } from "../session/outlets.ts";
import { sessionSecrets } from "../session/secrets.ts";
import type { ResolvedJob } from "../config/job.ts";
import type { AppContext } from "./context.ts";

export interface StoredCompaction {
  outcome: CompactionOutcome;
  /** A pass failed (`compaction.failed`). */
  failed: boolean;
}

export async function compactStored(
  context: Pick<AppContext, "store" | "clock" | "log" | "env" | "host" | "signal" | "providers">,
  session: { id: string; job: ResolvedJob; hooks: Hooks },
  options: { focus?: string } = {},
): Promise<StoredCompaction> {
  const { store, clock, log, env, host, signal, providers } = context;
  const { id, job } = session;
  const model = resolveModel(job.spec.model, { env, dir: job.dir, ...(providers ? { providers } : {}) });
  const bus = new EventBus(clock);
  let failed = false;
  bus.subscribe((event) => failed ||= event.type === "compaction.failed");
  const outlets = sessionOutlets(store, bus, redactorOf(sessionSecrets(env, job)));
  const compactor = createCompactor({
    store: outlets.store,
    provider: await createProvider(model, { env, clock, ...(providers ? { providers } : {}) }),
    model: model.name,
    context_window: model.context_window,
    ...(model.max_output_tokens === undefined ? {} : { max_output_tokens: model.max_output_tokens }),
    config: job.spec.compaction ?? {},
    events: outlets.events,
    hooks: session.hooks,
    clock,
    log,
    identity: currentProcess(host),
    price: model.price,
    // Summary calls stall by the same model.idle_timeout as the agent's own calls.
    ...(model.idle_timeout_ms ? { summary_idle_timeout_ms: model.idle_timeout_ms } : {}),
  });
  const outcome = outlets.result(
    await compactor.compact(id, {
      ...(signal ? { signal } : {}),
      ...(options.focus !== undefined ? { focus: options.focus } : {}),
    }),
  );
  return { outcome, failed };
}
