/**
 * `hermes sessions search QUERY... [--json] [--job NAME] [--limit N] [--sort newest|relevance]`: full-text
 * search over every message, newest first by default (stored text holds no secret: see runtime/session/outlets.ts).
 */
import { parseCommandArgs } from "../_cli.ts";
import { ValidationError } from "../../runtime/core/errors.ts";
import { SEARCH_ORDERS, type SearchOptions, type SearchOrder } from "../../runtime/app/mod.ts";
import { cliApp } from "../_app.ts";
import { jsonArray, parseLimit, type SessionsContext, withStore } from "./_context.ts";
import { renderHits } from "./_render.ts";

const COMMAND = "sessions search";

export async function search(ctx: SessionsContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(COMMAND, ctx.args);
  if (positionals.length === 0) throw new ValidationError(`hermes ${COMMAND}: expected a QUERY`);
  const options: SearchOptions = {};
  if (values.job !== undefined) options.job = values.job;
  if (values.sort !== undefined) {
    if (!SEARCH_ORDERS.includes(values.sort as SearchOrder)) {
      throw new ValidationError(
        `hermes ${COMMAND}: invalid --sort "${values.sort}": expected newest or relevance`,
      );
    }
    options.order = values.sort as SearchOrder;
  }
  const limit = parseLimit(COMMAND, values.limit);
  if (limit !== undefined) options.limit = limit;
  const hits = await withStore(
    ctx.cli,
    (store) => cliApp(ctx.cli, store).search(positionals.join(" "), options),
  );
  await ctx.cli.out(values.json ? jsonArray(hits.map((hit) => JSON.stringify(hit))) : renderHits(hits));
  if (!values.json && hits.length === 0 && !ctx.cli.quiet) ctx.cli.err("hermes: no matches");
  return 0;
}
