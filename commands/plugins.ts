/**
 * `hermes plugins list [--json] PATH` — the plugins of a job file or a directory, with their permissions
 * and what each registers (each is loaded in its sandbox to find out).
 * `hermes plugins check [--json] PATH` — preflight and load a plugin (granted what it requests) or a job's
 * plugins (granted what the job grants); prints the registrations; exit 0, or 2 with the error.
 */
import { resolve } from "../runtime/core/path.ts";
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { loadJob } from "../runtime/config/job_file.ts";
import type { PluginEntry } from "../runtime/config/job_schema.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { type PluginInfo, startPlugins } from "../plugins/host.ts";
import { readManifest } from "../plugins/manifest.ts";
import { describeGrant } from "../plugins/permissions.ts";
import { exists } from "../runtime/core/fs.ts";
import { visibleText } from "../runtime/core/visible.ts";

const JOB_FILE = /\.ya?ml$/i;
const MODULE_FILE = /\.(ts|mts|js|mjs|tsx|jsx)$/;

interface Target {
  entries: PluginEntry[];
  job_dir: string;
  /** A job gives config; a bare plugin has none to check against its config_schema. */
  from_job: boolean;
}

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("plugins", cli.args);
  const [sub, path, ...extra] = positionals;
  if ((sub !== "list" && sub !== "check") || path === undefined || extra.length > 0) {
    throw new ValidationError(
      "hermes plugins: expected `plugins list [--json] PATH` or `plugins check PATH`",
    );
  }
  const target = sub === "check" ? await checkTarget(path) : await listTarget(path);
  // Plugin state goes to a throw-away store: inspecting plugins never touches the user's sessions.
  const store = openSqliteStore(":memory:");
  try {
    const options = {
      job_dir: target.job_dir,
      store,
      log: cli.log,
      env: cli.env,
      validate_config: target.from_job,
      signal: cli.signal,
    };
    if (sub === "check") {
      const host = await startPlugins(target.entries, options);
      await host.stop();
      await print(cli, host.plugins.map((info) => ({ info })), values.json === true);
      return 0;
    }
    // All together first, so names are what a run gives them (same-named files are qualified together).
    const together = await startPlugins(target.entries, options).catch((error) => {
      if (error instanceof ValidationError) return null;
      throw error;
    });
    if (together) {
      await together.stop();
      await print(cli, together.plugins.map((info) => ({ info })), values.json === true);
      return 0;
    }
    // One at a time in the sense of failures: a broken plugin is reported without hiding the others.
    const rows = await Promise.all(target.entries.map(async (entry) => {
      try {
        const host = await startPlugins([entry], options);
        await host.stop();
        return { info: host.plugins[0]! };
      } catch (error) {
        if (!(error instanceof ValidationError)) throw error;
        return { path: entry.path, error: error.message };
      }
    }));
    await print(cli, rows, values.json === true);
    return rows.some((row) => "error" in row) ? 2 : 0;
  } finally {
    await store.close();
  }
}

/** `check`: a job file's plugins with the job's grants, or one plugin granted what it requests. */
async function checkTarget(path: string): Promise<Target> {
  if (JOB_FILE.test(path)) return jobTarget(path);
  const job_dir = Deno.cwd();
  const manifest = await readManifest(path, job_dir);
  return {
    entries: [{ path: resolve(job_dir, path), permissions: manifest.requested }],
    job_dir,
    from_job: false,
  };
}

/** `list`: a job file's plugins, a plugin directory, or every plugin in a directory. */
async function listTarget(path: string): Promise<Target> {
  if (JOB_FILE.test(path)) return jobTarget(path);
  const dir = resolve(path);
  const stat = await Deno.stat(dir).catch(() => {
    throw new ValidationError(`hermes plugins list: "${path}" does not exist`);
  });
  if (stat.isFile || await exists(`${dir}/plugin.json`)) return checkTarget(path);
  const paths: string[] = [];
  for await (const child of Deno.readDir(dir)) {
    const full = `${dir}/${child.name}`;
    if (child.isFile && MODULE_FILE.test(child.name) && !child.name.endsWith("_test.ts")) paths.push(full);
    else if (child.isDirectory && await exists(`${full}/plugin.json`)) paths.push(full);
  }
  paths.sort();
  const entries: PluginEntry[] = [];
  for (const full of paths) {
    const manifest = await readManifest(full, dir).catch(() => undefined);
    entries.push(manifest ? { path: full, permissions: manifest.requested } : { path: full });
  }
  return { entries, job_dir: Deno.cwd(), from_job: false };
}

function jobTarget(path: string): Target {
  const job = loadJob(path, { validateOnly: true });
  return { entries: job.spec.plugins ?? [], job_dir: job.dir, from_job: true };
}

type Row = { info: PluginInfo } | { path: string; error: string };

async function print(cli: Cli, rows: Row[], json: boolean): Promise<void> {
  if (json) {
    const plain = rows.map((row) => {
      if (!("info" in row)) return row;
      const { pid: _pid, ...info } = row.info;
      return info;
    });
    await cli.out(JSON.stringify(plain, null, 2) + "\n");
    return;
  }
  if (rows.length === 0) await cli.out("no plugins\n");
  for (const row of rows) {
    if (!("info" in row)) {
      await cli.out(visibleText(`✗ ${row.path}\n  error: ${row.error}\n`));
      continue;
    }
    const p = row.info;
    const lines = [
      `✓ ${p.name} ${p.version} (${p.path})${p.description ? `\n  ${p.description}` : ""}`,
      `  permissions: ${describeGrant(p.granted)}`,
      p.sandbox === "off"
        ? "  sandbox: off (runs on the host, bounded by Deno's permissions only)"
        : "  sandbox: bubblewrap (sees its own directory and its grants, nothing else)",
    ];
    if (p.hooks.length) lines.push(`  hooks: ${p.hooks.join(", ")}`);
    for (const c of p.commands) {
      lines.push(`  command /${c.name}${c.description ? ` — ${c.description}` : ""}`);
    }
    for (const t of p.tools) lines.push(`  tool ${t.name}${t.description ? ` — ${t.description}` : ""}`);
    if (!p.hooks.length && !p.commands.length && !p.tools.length) lines.push("  registers nothing");
    await cli.out(visibleText(lines.join("\n") + "\n"));
  }
}
