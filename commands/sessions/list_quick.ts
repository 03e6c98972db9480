/**
 * `hermes sessions list` before main.ts sets a command up (its logger, the secrets it redacts, signal
 * handlers, the store opener, the sessions dispatcher): the JSON list from a SQLite store at the current
 * schema, read with one read-only connection — the path whose start-up bench/startup_bench.ts measures
 * against a bare node:sqlite script. Undefined whenever that is not the whole answer (a table for a
 * terminal, a wrong flag, a PostgreSQL store, no store yet, an older schema, config.yaml to validate, any
 * error): main.ts then runs the command as usual (list.ts), which answers or reports what is wrong.
 */
import { storeLocation } from "../_cli.ts";
import { systemClock } from "../../runtime/core/clock.ts";
import { openSessionLister } from "../../runtime/store/open.ts";
import { jsonArray } from "./_context.ts";
import { listArgs } from "./list.ts";

export async function quickList(
  args: string[],
  where: { home: string; db: string | undefined; env: Record<string, string> },
): Promise<number | undefined> {
  let json: string[] | undefined;
  try {
    const { values, options } = listArgs(args, systemClock.now());
    if (!values.json && Deno.stdout.isTerminal()) return undefined;
    const { location } = await storeLocation(where.home, { flag: where.db, env: where.env });
    const lister = openSessionLister(location);
    try {
      json = lister?.listSessionsJson(options);
    } finally {
      lister?.close();
    }
  } catch {
    return undefined;
  }
  if (json === undefined) return undefined;
  const bytes = new TextEncoder().encode(jsonArray(json));
  let written = 0;
  while (written < bytes.length) written += await Deno.stdout.write(bytes.subarray(written));
  return 0;
}
