/**
 * `hermes sessions prune --older-than 30d [--job NAME] [--dry-run] [--yes] [--json]`.
 * Deleting many sessions needs consent: `--yes`, or an answer at a terminal prompt. Without either and with
 * stdin not a terminal (scripts, CI) it refuses with exit 2, so a forgotten flag never deletes anything.
 * stdout lists the pruned ids, one per line (the same lines for a dry run), or one JSON object with --json.
 */
import { parseCommandArgs } from "../_cli.ts";
import { RunError, ValidationError } from "../../runtime/core/errors.ts";
import { isoTime, type PruneOptions, type PrunePlan } from "../../runtime/app/mod.ts";
import { cliApp } from "../_app.ts";
import { noPositionals, parseAge, type SessionsContext, withStore } from "./_context.ts";
import { withGlobalHooks } from "./_hooks.ts";

const COMMAND = "sessions prune";

export async function prune(ctx: SessionsContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(COMMAND, ctx.args);
  noPositionals(COMMAND, positionals);
  const olderThan = values["older-than"];
  if (olderThan === undefined) {
    throw new ValidationError(`hermes ${COMMAND}: --older-than is required (for example --older-than 30d)`);
  }
  const options: PruneOptions = { olderThanMs: parseAge(COMMAND, "--older-than", olderThan) };
  if (values.job !== undefined) options.job = values.job;
  const dryRun = values["dry-run"] ?? false;
  const { cli } = ctx;
  if (!dryRun && !values.yes && !ctx.stdinIsTerminal) {
    throw new ValidationError(
      `hermes ${COMMAND}: refusing to delete sessions without confirmation: add --yes, or --dry-run to preview`,
    );
  }
  if (dryRun) {
    const plan = await withStore(cli, (store) => cliApp(cli, store).prune({ ...options, dryRun }));
    await printPlan(ctx, plan, { dryRun, json: values.json ?? false });
    return 0;
  }
  return await withGlobalHooks(cli, async (store, hooks) => {
    const app = cliApp(cli, store, { hooks });
    if (!values.yes) {
      const preview = await app.prune({ ...options, dryRun: true });
      if (preview.ids.length > 0) await confirm(ctx, preview);
    }
    const plan = await app.prune(options);
    await printPlan(ctx, plan, { dryRun, json: values.json ?? false });
    return 0;
  });
}

async function confirm(ctx: SessionsContext, preview: PrunePlan): Promise<void> {
  const n = preview.ids.length;
  const answer = await ask(ctx, `Delete ${n} sessions not updated since ${isoTime(preview.cutoff)}? [y/N] `);
  if (!/^y(es)?$/i.test(answer.trim())) {
    throw new RunError(`hermes ${COMMAND}: cancelled; nothing was deleted`, { reason: "cancelled" });
  }
}

async function printPlan(ctx: SessionsContext, plan: PrunePlan, as: { dryRun: boolean; json: boolean }) {
  const { cli } = ctx;
  const cutoff = isoTime(plan.cutoff);
  if (as.json) {
    const report = { dry_run: as.dryRun, cutoff, pruned_ids: plan.ids, skipped: plan.skipped };
    await cli.out(JSON.stringify(report) + "\n");
  } else {
    await cli.out(plan.ids.map((id) => `${id}\n`).join(""));
  }
  if (cli.quiet) return;
  const count = `${plan.ids.length} session${plan.ids.length === 1 ? "" : "s"}`;
  cli.err(`hermes: ${as.dryRun ? "would delete" : "deleted"} ${count} not updated since ${cutoff}`);
  for (const s of plan.skipped) cli.err(`hermes: skipped ${s.id}: ${s.reason}`);
}

/** Asks on stderr and reads one line from stdin. */
export async function ask(ctx: SessionsContext, question: string): Promise<string> {
  ctx.cli.err(question);
  const reader = ctx.cli.stdin.getReader();
  const decoder = new TextDecoder();
  let line = "";
  try {
    while (!line.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      line += decoder.decode(value, { stream: true });
    }
  } finally {
    reader.releaseLock();
  }
  return line.split("\n")[0]!;
}
