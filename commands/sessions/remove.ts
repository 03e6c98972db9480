/**
 * `hermes sessions delete|archive|unarchive ID...`: all or none. stdout lists the affected ids, one per line
 * (or one JSON object with --json); a summary goes to stderr.
 */
import { parseCommandArgs } from "../_cli.ts";
import { ValidationError } from "../../runtime/core/errors.ts";
import { cliApp } from "../_app.ts";
import { type SessionsContext, withStore } from "./_context.ts";
import { withGlobalHooks } from "./_hooks.ts";
import { ask } from "./prune.ts";
import type { Store } from "../../runtime/store/store.ts";
import { existsSync } from "../../runtime/core/fs.ts";
import { discardWorktree, type Worktree, WORKTREE_KEY } from "../../runtime/session/worktree.ts";

export async function deleteCommand(ctx: SessionsContext): Promise<number> {
  const { values, positionals: ids } = parseCommandArgs("sessions delete", ctx.args);
  requireIds("sessions delete", ids);
  return await withGlobalHooks(ctx.cli, async (store, hooks) => {
    const worktrees = await worktreesOf(store, ids);
    const deleted = await cliApp(ctx.cli, store, { hooks }).delete(ids, { force: values.force ?? false });
    await report(ctx, values.json, { deleted_ids: deleted }, deleted, `deleted ${plural(deleted.length)}`);
    for (const [id, worktree] of worktrees) {
      if (deleted.includes(id)) await offerRemoval(ctx, id, worktree, values["remove-worktree"] === true);
    }
    return 0;
  });
}

/** The worktrees (workspace.isolation: worktree) of the sessions `ids` names, still on disk. */
async function worktreesOf(store: Store, ids: string[]): Promise<Map<string, Worktree>> {
  const found = new Map<string, Worktree>();
  for (const ref of ids) {
    const id = await store.resolveSessionId(ref).catch(() => undefined);
    if (id === undefined) continue;
    const worktree = await store.getState<Worktree>(id, WORKTREE_KEY);
    if (worktree && existsSync(worktree.path)) found.set(id, worktree);
  }
  return found;
}

/**
 * A deleted session's worktree: removed with --remove-worktree or when the user says yes on a terminal;
 * otherwise (no terminal to ask on) kept, and stderr says how to remove it. Its branch stays when it holds
 * commits: they are the run's work.
 */
async function offerRemoval(
  ctx: SessionsContext,
  id: string,
  worktree: Worktree,
  remove: boolean,
): Promise<void> {
  const { cli } = ctx;
  if (!remove && ctx.stdinIsTerminal) {
    const answer = await ask(
      ctx,
      `Remove the worktree ${worktree.path} of session ${id} (branch ${worktree.branch})? [y/N] `,
    );
    remove = /^y(es)?$/i.test(answer.trim());
  }
  if (!remove) {
    cli.err(
      `hermes: kept the worktree ${worktree.path} of session ${id} (branch ${worktree.branch}); remove it with ` +
        `git worktree remove ${worktree.path}, or delete with --remove-worktree`,
    );
    return;
  }
  const { branchKept } = await discardWorktree(worktree);
  cli.err(
    `hermes: removed the worktree ${worktree.path}` +
      (branchKept
        ? `; its branch ${worktree.branch} keeps the run's commits`
        : ` and its branch ${worktree.branch}`),
  );
}

export async function archiveCommand(ctx: SessionsContext): Promise<number> {
  const { values, positionals: ids } = parseCommandArgs("sessions archive", ctx.args);
  requireIds("sessions archive", ids);
  return await withGlobalHooks(ctx.cli, async (store, hooks) => {
    const result = await cliApp(ctx.cli, store, { hooks }).archive(ids, { force: values.force ?? false });
    const note = result.unchanged.length ? `; already archived: ${result.unchanged.join(", ")}` : "";
    await report(
      ctx,
      values.json,
      { archived_ids: result.changed, already_archived_ids: result.unchanged },
      result.changed,
      `archived ${plural(result.changed.length)}${note}`,
    );
    return 0;
  });
}

export async function unarchiveCommand(ctx: SessionsContext): Promise<number> {
  const { values, positionals: ids } = parseCommandArgs("sessions unarchive", ctx.args);
  requireIds("sessions unarchive", ids);
  const result = await withStore(ctx.cli, (store) => store.unarchiveSessions(ids));
  const note = result.unchanged.length ? `; not archived: ${result.unchanged.join(", ")}` : "";
  await report(
    ctx,
    values.json,
    { unarchived_ids: result.changed, not_archived_ids: result.unchanged },
    result.changed,
    `unarchived ${plural(result.changed.length)}${note}`,
  );
  return 0;
}

function requireIds(command: string, ids: string[]): void {
  if (ids.length === 0) {
    throw new ValidationError(`hermes ${command}: expected at least one session id (or "latest")`);
  }
}

async function report(
  ctx: SessionsContext,
  json: boolean | undefined,
  object: Record<string, string[]>,
  ids: string[],
  summary: string,
): Promise<void> {
  await ctx.cli.out(json ? JSON.stringify(object) + "\n" : ids.map((id) => `${id}\n`).join(""));
  if (!ctx.cli.quiet) ctx.cli.err(`hermes: ${summary}`);
}

function plural(n: number): string {
  return `${n} session${n === 1 ? "" : "s"}`;
}
