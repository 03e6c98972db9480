/**
 * A throwaway PostgreSQL cluster for tests that stop, crash or restart the server (never the shared test
 * server): initdb in a temp dir, a Unix socket only, started and stopped with pg_ctl of the newest server
 * under /usr/lib/postgresql (15 on our machines). As root the server runs as the `postgres` user
 * (`runuser -u postgres --`), as the current user otherwise.
 * `throwawayCluster()` resolves with a reason instead when this machine has no PostgreSQL binaries.
 */
const PG_LIB = "/usr/lib/postgresql";

/** The newest installed server's bin directory (as .ci/run picks it), or undefined. */
function pgBin(): string | undefined {
  try {
    const versions = [...Deno.readDirSync(PG_LIB)].map((e) => e.name).filter((name) => /^\d+$/.test(name));
    versions.sort((a, b) => Number(b) - Number(a));
    for (const version of versions) {
      const bin = `${PG_LIB}/${version}/bin`;
      try {
        Deno.statSync(`${bin}/initdb`);
        Deno.statSync(`${bin}/pg_ctl`);
        return bin;
      } catch { /* not a server install */ }
    }
  } catch { /* no PostgreSQL at all */ }
  return undefined;
}

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
export function clusterSkipReason(): Promise<string | undefined> {
  return Promise.resolve(
    pgBin() ? undefined : `no PostgreSQL server binaries under ${PG_LIB}/*/bin (install postgresql)`,
  );
}

/** `password`: logins need it (scram-sha-256), so a wrong one is refused; default: trust. */
export async function throwawayCluster(
  options: { password?: string } = {},
): Promise<Cluster | { skip: string }> {
  const bin = pgBin();
  if (!bin) return { skip: (await clusterSkipReason())! };
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
  await run([`${bin}/initdb`, "-D", data, ...auth, "-U", "postgres", "--no-sync", "-E", "UTF8"], root);
  const serverOptions = `-k ${dir} -p ${port} -c listen_addresses='' -c fsync=off`;
  const pgctl = (...args: string[]) =>
    run([`${bin}/pg_ctl`, "-D", data, "-l", `${dir}/log`, "-w", "-t", "60", ...args], root);
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
