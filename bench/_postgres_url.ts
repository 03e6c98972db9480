/**
 * The PostgreSQL server a bench runs against: `--url`, else HERMES_TEST_POSTGRES_URL (what `.ci/run` sets).
 * Without one the bench prints why it is skipped and exits 0, so `deno task bench` still runs the rest.
 */
export function benchPostgresUrl(flag: string | undefined, bench: string): string {
  const url = flag ?? Deno.env.get("HERMES_TEST_POSTGRES_URL");
  if (url) return url;
  console.log(
    `${bench} skipped: no PostgreSQL server (pass --url postgres://… or set HERMES_TEST_POSTGRES_URL)`,
  );
  Deno.exit(0);
}
