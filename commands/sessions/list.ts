/** `hermes sessions list`: a table on a terminal, a JSON array otherwise (or always with --json). */
import { parseCommandArgs } from "../_cli.ts";
import { openSessionLister } from "../../runtime/store/open.ts";
import { ValidationError } from "../../runtime/core/errors.ts";
import type { ListSessionsOptions } from "../../runtime/store/store.ts";
import {
  jsonArray,
  noPositionals,
  parseLimit,
  parseSince,
  type SessionsContext,
  withStore,
} from "./_context.ts";
import { LIST_STATUSES } from "./list_quick.ts";

const COMMAND = "sessions list";

export async function list(ctx: SessionsContext): Promise<number> {
  const { values, options } = listArgs(ctx.args, ctx.cli.clock.now());
  const json = await listed(ctx, options) ??
    await withStore(ctx.cli, (store) => store.listSessionsJson(options));
  if (values.json || !ctx.stdoutIsTerminal) await ctx.cli.out(jsonArray(json));
  else {
    const { renderTable } = await import("./_render.ts");
    await ctx.cli.out(renderTable(json.map((text) => JSON.parse(text))));
  }
  return 0;
}

/** The flags of `sessions list` and the listing they ask for; a ValidationError for a wrong one. */
export function listArgs(args: string[], now: number) {
  const { values, positionals } = parseCommandArgs(COMMAND, args);
  noPositionals(COMMAND, positionals);
  if (values.status !== undefined && !LIST_STATUSES.includes(values.status)) {
    throw new ValidationError(
      `hermes ${COMMAND}: invalid --status "${values.status}": expected one of ${LIST_STATUSES.join(", ")}`,
    );
  }
  const options: ListSessionsOptions = {};
  if (values.job !== undefined) options.job = values.job;
  if (values.status !== undefined) options.status = values.status;
  if (values.since !== undefined) options.since = parseSince(COMMAND, values.since, now);
  if (values.archived) options.archived = true;
  const limit = parseLimit(COMMAND, values.limit);
  if (limit !== undefined) options.limit = limit;
  return { values, options };
}

/**
 * The list read straight from a SQLite store at the current schema (store/open.ts openSessionLister), without
 * loading the store's modules; undefined when that cannot answer, and the full store does (it migrates,
 * waits out a busy database and reports a broken one).
 */
async function listed(ctx: SessionsContext, options: ListSessionsOptions): Promise<string[] | undefined> {
  let lister;
  try {
    lister = await openSessionLister(ctx.cli.dbPath);
    return lister?.listSessionsJson(options);
  } catch {
    return undefined;
  } finally {
    lister?.close();
  }
}
