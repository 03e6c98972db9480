/**
 * What `hermes validate` checks of this machine, so that it refuses what `run` would refuse here: a job
 * whose shell tool, plugins or stdio MCP servers need the OS sandbox on a machine where bubblewrap cannot
 * start; with `--deep`, also plugins and MCP servers that cannot start (each is started as a run starts it,
 * then stopped). A server that is not `required` does not stop a run: its failure is a warning here too.
 */
import { errorMessage, ValidationError } from "../core/errors.ts";
import { silentLogger } from "../core/log.ts";
import { EventBus } from "../core/events.ts";
import type { Clock } from "../core/clock.ts";
import type { ResolvedJob } from "../config/job.ts";
import { keyPath } from "../core/key_path.ts";
import { probeOnce, probeOptions } from "../sandbox/probe.ts";

export interface MachineCheck {
  /** `file:line:col: key.path: message` lines: run would refuse the job here. */
  problems: string[];
  /** Lines that do not make the job invalid (an optional MCP server that does not start). */
  warnings: string[];
}

export interface MachineOptions {
  env: Record<string, string>;
  clock: Clock;
  deep: boolean;
  signal?: AbortSignal;
}

type Locate = (keyPath: (string | number)[]) => string;

export async function checkMachine(
  job: ResolvedJob,
  locate: Locate,
  options: MachineOptions,
): Promise<MachineCheck> {
  const { spec } = job;
  const problems: string[] = [];
  const warnings: string[] = [];
  const at = (path: (string | number)[], message: string) => `${locate(path)}: ${keyPath(path)}: ${message}`;
  const probe = probeOnce(probeOptions(options.env));
  const sandboxed: [path: (string | number)[], what: string][] = [];
  if (spec.tools?.shell && spec.tools.shell.sandbox !== "off") {
    sandboxed.push([["tools", "shell"], "the shell tool"]);
  }
  (spec.plugins ?? []).forEach((entry, i) => {
    if (entry.sandbox !== "off") sandboxed.push([["plugins", i], `plugin ${entry.path}`]);
  });
  for (const [name, entry] of Object.entries(spec.mcp_servers ?? {})) {
    if (entry.command !== undefined && entry.sandbox !== "off") {
      sandboxed.push([["mcp_servers", name], `MCP server "${name}"`]);
    }
  }
  if (sandboxed.length > 0) {
    const result = await probe();
    if (!result.ok) {
      for (const [path, what] of sandboxed) {
        problems.push(
          at(path, `Cannot run ${what} in its OS sandbox here: ${result.reason}; ${result.hint}`),
        );
      }
      return { problems, warnings };
    }
  }
  if (!options.deep) return { problems, warnings };
  if (spec.plugins?.length) {
    const [{ startPlugins }, { openSqliteStore }] = await Promise.all([
      import("../../plugins/host.ts"),
      import("../store/sqlite/sqlite_store.ts"),
    ]);
    // Plugin state goes to a throw-away store: validating never touches the user's sessions.
    const store = openSqliteStore(":memory:");
    try {
      const host = await startPlugins(spec.plugins, {
        job_dir: job.dir,
        store,
        log: silentLogger,
        env: options.env,
        probe,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      await host.stop();
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      problems.push(at(["plugins"], errorMessage(error)));
    } finally {
      await store.close();
    }
  }
  if (spec.mcp_servers && Object.keys(spec.mcp_servers).length) {
    const { startMcpServers } = await import("../mcp/mod.ts");
    const started = await startMcpServers(spec.mcp_servers, {
      job_dir: job.dir,
      env: options.env,
      events: new EventBus(options.clock),
      session_id: "validate",
      log: silentLogger,
      probe,
      reportOnly: true,
    });
    await started.stop();
    for (const server of started.status) {
      if (server.started) continue;
      const line = at(["mcp_servers", server.name], `the server does not start: ${server.error}`);
      (server.required ? problems : warnings).push(line);
    }
  }
  return { problems, warnings };
}
