/**
 * A throwaway PostgreSQL cluster for tests that stop, crash or restart the server (never the shared test
 * server): initdb in a temp dir, a Unix socket only, started and stopped with pg_ctl from PG_BIN. As root
 * the server runs as the `postgres` user (`runuser -u postgres --`), as the current user otherwise.
 * `throwawayCluster()` resolves with a reason instead when this machine has no PostgreSQL binaries.
 */
const PG_BIN = "/usr/lib/postgresql/15/bin";

export interface Cluster extends AsyncDisposable {
  /** libpq URI of the `postgres` database over the cluster's socket. */
  url: string;
  /** `pg_ctl stop -m immediate` (connections cut, no shutdown checkpoint: a crash). */
  crash(): Promise<void>;
  start(): Promise<void>;
  /** Crashes the server, keeps it down `downMs`, starts it again. */
  restart(downMs: number): Promise<void>;
}

async function run(argv: string[], asPostgres: boolean): Promise<string> {
  const [cmd, ...args] = asPostgres ? ["runuser", "-u", "postgres", "--", ...argv] : argv;
  const { code, stdout, stderr } = await new Deno.Command(cmd!, { args, stdin: "null" }).output();
  const text = new TextDecoder().decode(stdout) + new TextDecoder().decode(stderr);
  if (code !== 0) throw new Error(`${argv.join(" ")} failed (${code}): ${text}`);
  return text;
}

/** Why no throwaway cluster can be made here, or undefined when one can. */
export async function clusterSkipReason(): Promise<string | undefined> {
  try {
    await Deno.stat(`${PG_BIN}/initdb`);
    await Deno.stat(`${PG_BIN}/pg_ctl`);
    return undefined;
  } catch {
    return `no PostgreSQL binaries at ${PG_BIN} (install postgresql-15)`;
  }
}

/** `password`: logins need it (scram-sha-256), so a wrong one is refused; default: trust. */
export async function throwawayCluster(
  options: { password?: string } = {},
): Promise<Cluster | { skip: string }> {
  const skip = await clusterSkipReason();
  if (skip) return { skip };
  const root = Deno.uid() === 0;
  const dir = await Deno.makeTempDir({ prefix: "hermes-pgc-" });
  await Deno.chmod(dir, 0o755);
  if (root) await run(["chown", "postgres", dir], false);
  const data = `${dir}/data`;
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const auth = ["-A", "trust"];
  if (options.password !== undefined) {
    await Deno.writeTextFile(`${dir}/pwfile`, options.password + "\n");
    if (root) await run(["chown", "postgres", `${dir}/pwfile`], false);
    auth.splice(0, 2, "-A", "scram-sha-256", `--pwfile=${dir}/pwfile`);
  }
  await run([`${PG_BIN}/initdb`, "-D", data, ...auth, "-U", "postgres", "--no-sync", "-E", "UTF8"], root);
  const serverOptions = `-k ${dir} -p ${port} -c listen_addresses='' -c fsync=off`;
  const pgctl = (...args: string[]) =>
    run([`${PG_BIN}/pg_ctl`, "-D", data, "-l", `${dir}/log`, "-w", "-t", "60", ...args], root);
  const start = async () => void await pgctl("-o", serverOptions, "start");
  const crash = async () => void await pgctl("-m", "immediate", "stop");
  await start();
  return {
    url: `postgres://postgres${
      options.password !== undefined ? `:${encodeURIComponent(options.password)}` : ""
    }@/postgres?host=${dir}&port=${port}`,
    crash,
    start,
    async restart(downMs) {
      await crash();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await start();
    },
    async [Symbol.asyncDispose]() {
      await pgctl("-m", "immediate", "stop").catch(() => {});
      await Deno.remove(dir, { recursive: true });
    },
  };
}
