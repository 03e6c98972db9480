/**
 * A PostgreSQL store's health, read without changing it (nothing created or migrated): can this host log
 * in, and is the schema one this Hermes can use (newer is a problem; pending migrations are applied by the
 * next process that opens it).
 */
import postgres from "postgres";
import { errorMessage } from "../../core/errors.ts";
import { newerSchema, type StoreHealth } from "../health.ts";
import { migrations } from "./_migrations.ts";
import { clientOptions, parsePostgresUrl, redactUrl } from "./_url.ts";

export async function postgresHealth(url: string, options: { schema?: string } = {}): Promise<StoreHealth> {
  const display = redactUrl(url);
  let sql: postgres.Sql | undefined;
  try {
    const target = parsePostgresUrl(url);
    sql = postgres({
      ...clientOptions(target),
      max: 1,
      connect_timeout: target.connect_timeout ?? 5,
      backoff: () => 0,
      fetch_types: false,
      onnotice: () => {},
      ...(options.schema ? { connection: { search_path: options.schema } } : {}),
    });
    const [server] =
      await sql`SELECT current_setting('server_version') AS v, to_regclass('schema_version') AS t`;
    const reached = `${display} (PostgreSQL ${server!.v})`;
    if (server!.t === null) {
      return {
        ok: true,
        detail: `${reached} reachable; no Hermes store there yet (created when first used)`,
      };
    }
    const [row] = await sql`SELECT coalesce(max(version), 0) AS v FROM schema_version`;
    const version = Number(row!.v);
    const newer = newerSchema(reached, version, migrations.length);
    if (newer) return newer;
    const pending = migrations.length - version;
    return {
      ok: true,
      detail: `${reached} reachable; schema version ${version}${
        pending > 0 ? `, ${pending} migration(s) pending (applied when next opened)` : ""
      }`,
    };
  } catch (error) {
    return {
      ok: false,
      detail: `Cannot connect to the store at ${display}: ${errorMessage(error).replace(/\s*\n\s*/g, " ")}`,
      hint:
        "check that the server runs and the URL, user and password in --db / HERMES_DATABASE_URL / store.url",
    };
  } finally {
    await sql?.end({ timeout: 1 });
  }
}
