/**
 * Test support for the PostgreSQL store: the test server is named by HERMES_TEST_POSTGRES_URL (libpq URI
 * form; `.ci/run` starts a throwaway cluster and sets it), and each test's store lives in a fresh schema.
 */
import postgres from "postgres";
import { clientOptions, parsePostgresUrl } from "./_url.ts";

export const URL_VARIABLE = "HERMES_TEST_POSTGRES_URL";

/** Runs `fn` on a one-connection client of the test server (for creating and dropping schemas). */
export async function admin<T>(serverUrl: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres({
    ...clientOptions(parsePostgresUrl(serverUrl)),
    max: 1,
    onnotice: () => {},
    fetch_types: false,
  });
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** A schema name no other test uses. */
export function freshSchema(): string {
  return `hermes_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
}

/** Drops `schema` and everything in it. */
export function dropSchema(serverUrl: string, schema: string): Promise<unknown> {
  return admin(serverUrl, (sql) => sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`);
}

/** A fresh database on the test server, for a test that runs `hermes` processes against its URL. */
export interface ScratchDatabase extends AsyncDisposable {
  /** `serverUrl` naming the new database. */
  url: string;
}

/** Creates a database no other test uses; disposing it drops it (connections still open included). */
export async function scratchDatabase(serverUrl: string, prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  await admin(serverUrl, (sql) => sql.unsafe(`CREATE DATABASE ${name}`));
  return {
    url: serverUrl.replace(/^(postgres(?:ql)?:\/\/[^/?#]*)(\/[^?#]*)?/, `$1/${name}`),
    async [Symbol.asyncDispose]() {
      await admin(serverUrl, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
