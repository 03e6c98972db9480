/**
 * `hermes sessions list` before main.ts sets a command up (its logger, the secrets it redacts, signal
 * handlers, the store opener, the sessions dispatcher, the flag parser): the JSON list from a SQLite store at
 * the current schema, read with one read-only connection — the path whose start-up bench/startup_bench.ts
 * measures against a bare node:sqlite script. Each module loaded here costs that path a fraction of a
 * millisecond, so this one reads only the plain forms of the flags itself and imports nothing but the lister.
 * Undefined whenever that is not the whole answer (a table for a terminal, a flag form or value it does not
 * read, --since, a PostgreSQL store, a config.yaml naming the store, no store yet, an older schema, any
 * error): main.ts then runs the command as usual (list.ts), which answers or reports what is wrong.
 */
import type { ListSessionsOptions } from "../../runtime/store/store.ts";
import { openSqliteLister } from "../../runtime/store/sqlite/lister.ts";

/** The values of `--status` (list.ts rejects any other). */
export const LIST_STATUSES: readonly string[] = [
  "running",
  "idle",
  "success",
  "failed",
  "limit",
  "interrupted",
];

/** The global flags (commands/_flags.ts) main.ts leaves among a command's arguments. */
const GLOBAL_WITH_VALUE = new Set(["--home", "--db", "--policy", "--log-level"]);
const GLOBAL_SWITCHES = new Set(["--quiet", "-q"]);

/** A JSON array of already serialized elements, one per line: valid JSON for parsers, greppable for people. */
export function jsonArray(elements: readonly string[]): string {
  return elements.length === 0 ? "[]\n" : `[\n${elements.join(",\n")}\n]\n`;
}

export async function quickList(
  args: string[],
  where: { home: string; db: string | undefined; env: Record<string, string> },
): Promise<number | undefined> {
  let json: string[] | undefined;
  try {
    const read = plainArgs(args);
    if (!read || (!read.json && Deno.stdout.isTerminal())) return undefined;
    const location = sqliteLocation(where);
    if (location === undefined) return undefined;
    const lister = openSqliteLister(location);
    try {
      json = lister?.listSessionsJson(read.options);
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

/**
 * The listing `args` ask for when each is in a form list.ts reads the same way (`--flag value`, each flag
 * once, a valid value); undefined for anything else, which list.ts then parses (and reports).
 */
function plainArgs(args: string[]): { json: boolean; options: ListSessionsOptions } | undefined {
  const options: ListSessionsOptions = {};
  const seen = new Set<string>();
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (GLOBAL_SWITCHES.has(arg)) continue;
    if (GLOBAL_WITH_VALUE.has(arg)) {
      i++;
      continue;
    }
    if (seen.has(arg)) return undefined;
    seen.add(arg);
    const value = args[i + 1];
    if (arg === "--json") json = true;
    else if (arg === "--archived") options.archived = true;
    else if (value === undefined || value.startsWith("-")) return undefined;
    else if (arg === "--job") (options.job = value, i++);
    else if (arg === "--status" && LIST_STATUSES.includes(value)) (options.status = value, i++);
    else if (arg === "--limit" && /^\d+$/.test(value) && Number(value) >= 1) {
      (options.limit = Number(value), i++);
    } else return undefined;
  }
  return { json, options };
}

/**
 * The SQLite file the store is (commands/_cli.ts storeLocation: --db > HERMES_DATABASE_URL > config.yaml's
 * `store.url` > HOME/state.db); undefined for a PostgreSQL URL, or when config.yaml names the store (reading
 * it loads yaml and zod: the full path does that). Throws when HOME cannot be listed (then there is no store
 * to read either).
 */
function sqliteLocation(
  where: { home: string; db: string | undefined; env: Record<string, string> },
): string | undefined {
  let location = where.db ?? where.env.HERMES_DATABASE_URL;
  if (location === undefined) {
    if (hasConfig(where.home) && /^store\s*:/m.test(Deno.readTextFileSync(`${where.home}/config.yaml`))) {
      return undefined;
    }
    location = `${where.home}/state.db`;
  }
  return /^postgres(?:ql)?:\/\//.test(location) ? undefined : location;
}

/**
 * Whether `home` holds a config.yaml, seen in its listing: most homes have none, and reading a missing file
 * costs this path its NotFound error (~0.4 ms), an async read another ~0.5 ms.
 */
function hasConfig(home: string): boolean {
  for (const entry of Deno.readDirSync(home)) if (entry.name === "config.yaml") return true;
  return false;
}
