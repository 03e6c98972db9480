/**
 * `hermes doctor [--json] [--full]`: can this machine run what Hermes promises — the OS sandbox for the
 * shell tool and plugins, deno for plugin subprocesses, a store that is reachable, intact and writable?
 * One line per check; exit 1 when one fails.
 */
import { dirname } from "../runtime/core/path.ts";
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { probeOptions, probeSandbox, type SandboxProbe } from "../runtime/sandbox/probe.ts";
import { pluginCommand } from "../plugins/sandbox_policy.ts";
import { findDeno, findDenoOrNull } from "../runtime/sandbox/deno_path.ts";
import { probeHostLists } from "../runtime/sandbox/net_probe.ts";
import { errorMessage } from "../runtime/core/errors.ts";
import { isPostgresUrl } from "../runtime/store/postgres/_url.ts";
import { sqliteHealth } from "../runtime/store/sqlite/health.ts";

export interface Check {
  name: "sandbox" | "network" | "plugins" | "store";
  ok: boolean;
  detail: string;
  /** How to fix it, when it failed. */
  hint?: string;
}

export async function main(cli: Cli): Promise<number> {
  const { values } = parseCommandArgs("doctor", cli.args);
  const probe = await probeSandbox(probeOptions(cli.env));
  const checks = [
    sandboxCheck(probe),
    await networkCheck(cli.env, probe),
    await pluginsCheck(cli.env, probe),
    await storeCheck(cli.dbPath, { full: values.full ?? false }),
  ];
  if (values.json) await cli.out(JSON.stringify({ ok: checks.every((c) => c.ok), checks }) + "\n");
  else {
    for (const check of checks) {
      const hint = check.ok || !check.hint ? "" : ` (${check.hint})`;
      await cli.out(`${check.name.padEnd(8)} ${check.ok ? "ok  " : "FAIL"} ${check.detail}${hint}\n`);
    }
  }
  return checks.every((c) => c.ok) ? 0 : 1;
}

function sandboxCheck(probe: SandboxProbe): Check {
  if (!probe.ok) return { name: "sandbox", ok: false, detail: probe.reason, hint: probe.hint };
  const { pids, memory } = probe.cgroups;
  const cgroup = (c: NonNullable<typeof pids>) => `cgroup v${c.version}, in ${c.parent}`;
  const processes = pids
    ? `a pids cgroup per command (${cgroup(pids)}${
      Deno.uid() === 0 ? "; RLIMIT_NPROC does not bind uid 0" : ""
    })`
    : Deno.uid() === 0
    ? "RLIMIT_NPROC only, which does not bind uid 0: no cap on processes (run as another user, or give " +
      "Hermes a writable cgroup with the pids controller)"
    : "RLIMIT_NPROC (it counts all of this user's processes, inside and outside the sandbox)";
  const memoryBy = memory
    ? `a memory cgroup per command for the whole tree, ${
      memory.swap ? "swap included" : "RAM only (the kernel does not account swap here)"
    } (${cgroup(memory)}), and RLIMIT_DATA per process`
    : "RLIMIT_DATA only, per process, not for the whole tree (give Hermes a writable cgroup with the " +
      "memory controller)";
  return {
    name: "sandbox",
    ok: true,
    detail: `bubblewrap ${probe.version} at ${probe.path} runs a sandboxed command; no host unix sockets ` +
      `without the network (seccomp, ${probe.seccomp.arch}); limits: processes by ${processes}, memory by ` +
      `${memoryBy}, file size by RLIMIT_FSIZE, /tmp and /dev/shm by tmpfs size`,
  };
}

/** Host lists (`net: [hosts]`) need the bridge into the sandbox's network namespace (net_bridge.ts). */
async function networkCheck(env: Record<string, string>, probe: SandboxProbe): Promise<Check> {
  if (!probe.ok) {
    return { name: "network", ok: false, detail: "host lists cannot be enforced: the sandbox cannot start" };
  }
  const { ok: _ok, ...bwrap } = probe;
  const found = await probeHostLists(bwrap, findDenoOrNull(env), env);
  return found.ok ? { name: "network", ok: true, detail: found.detail } : {
    name: "network",
    ok: false,
    detail: `host lists (net: [hosts]) cannot be enforced here: ${found.reason}`,
    hint: "install util-linux (nsenter) and deno, or use net: true or false; jobs with a host list exit 2",
  };
}

/** deno must run, and run inside the plugin sandbox (the policy every plugin gets, granted nothing). */
async function pluginsCheck(env: Record<string, string>, probe: SandboxProbe): Promise<Check> {
  let deno: string;
  try {
    deno = findDeno(env);
  } catch (error) {
    return {
      name: "plugins",
      ok: false,
      detail: errorMessage(error),
      hint: "install deno or set HERMES_DENO",
    };
  }
  const plain = await versionOf(deno, [deno, "--version"]);
  if (!plain.ok) return plain;
  if (!probe.ok) {
    return {
      name: "plugins",
      ok: false,
      detail: `${plain.detail}, but plugins run in the OS sandbox, which cannot start here`,
      hint: "fix the sandbox (above), or opt out with `sandbox: off` on each plugin entry",
    };
  }
  const { ok: _ok, ...bwrap } = probe;
  const dir = await Deno.makeTempDir({ prefix: "hermes-doctor-" });
  try {
    const wrapped = pluginCommand([deno, "--version"], {
      sandbox: bwrap,
      granted: {},
      root: dir,
      job_dir: dir,
      env: {},
    });
    const sandboxed = await versionOf(deno, [wrapped.cmd, ...wrapped.args], wrapped.env);
    return sandboxed.ok
      ? { name: "plugins", ok: true, detail: `${plain.detail}, runs in the plugin sandbox` }
      : { ...sandboxed, detail: `${deno} runs, but not in the plugin sandbox: ${sandboxed.detail}` };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function versionOf(deno: string, argv: string[], env?: Record<string, string>): Promise<Check> {
  try {
    const { success, stdout, stderr } = await new Deno.Command(argv[0]!, {
      args: argv.slice(1),
      ...(env ? { env, clearEnv: true } : {}),
      stdin: "null",
    }).output();
    const version = new TextDecoder().decode(stdout).split("\n")[0] ?? "";
    if (success) return { name: "plugins", ok: true, detail: `${version} at ${deno}` };
    const why = new TextDecoder().decode(stderr).trim().split("\n")[0] ?? "";
    return {
      name: "plugins",
      ok: false,
      detail: `${deno} --version failed${why ? `: ${why}` : ""}`,
      hint: "set HERMES_DENO to a working deno",
    };
  } catch (error) {
    return { name: "plugins", ok: false, detail: `Cannot run ${deno}: ${errorMessage(error)}` };
  }
}

/**
 * The store must be usable: a PostgreSQL server reachable with a schema this Hermes knows; a SQLite file
 * that is SQLite, intact (quick_check, or integrity_check with --full), of a known schema, and writable
 * (or, before the first run, its directory).
 */
async function storeCheck(dbPath: string, options: { full: boolean }): Promise<Check> {
  if (isPostgresUrl(dbPath)) {
    const { postgresHealth } = await import("../runtime/store/postgres/health.ts");
    return { name: "store", ...await postgresHealth(dbPath) };
  }
  const exists = await Deno.stat(dbPath).then(() => true, () => false);
  if (exists) {
    const health = sqliteHealth(dbPath, options);
    if (!health.ok) return { name: "store", ...health };
    const writable = await writableCheck(dbPath);
    return writable.ok ? { name: "store", ...health, detail: `${health.detail}; writable` } : writable;
  }
  return await writableCheck(dbPath);
}

/** The store file (or, before the first run, its directory) must be writable. */
async function writableCheck(dbPath: string): Promise<Check> {
  const target = await Deno.stat(dbPath).then(() => dbPath, () => dirname(dbPath));
  try {
    await Deno.mkdir(dirname(dbPath), { recursive: true, mode: 0o700 });
    const file = await Deno.open(target === dbPath ? dbPath : `${target}/.hermes-doctor-${Deno.pid}`, {
      write: true,
      create: target !== dbPath,
    });
    file.close();
    if (target !== dbPath) await Deno.remove(`${target}/.hermes-doctor-${Deno.pid}`);
    return {
      name: "store",
      ok: true,
      detail: `${dbPath} is writable${target === dbPath ? "" : " (not created yet)"}`,
    };
  } catch (error) {
    return {
      name: "store",
      ok: false,
      detail: `Cannot write the store ${dbPath}: ${errorMessage(error)}`,
      hint: "use a writable --home or --db",
    };
  }
}
