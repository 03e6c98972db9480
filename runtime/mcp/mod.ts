/**
 * A session's MCP servers (docs/mcp.md): all started at once before the first model call, their tools
 * exposed as `mcp__SERVER__TOOL` and called through the session's tool gate like every other tool (the
 * server's `tools: {allow, deny}` there, pre_tool_call hooks, tool.* events with `server`, redaction);
 * stopped with the session. A server that fails to start is a warning
 * (`mcp.error`) — or, with `required: true`, a ValidationError (exit 2) after the others are stopped.
 */
import type { McpServerEntry } from "../config/job_schema.ts";
import { errorMessage, ValidationError } from "../core/errors.ts";
import type { EventBus } from "../core/events.ts";
import type { Logger } from "../core/log.ts";
import type { Tool } from "../tools/tool.ts";
import { McpConnection } from "./connection.ts";
import { toOutcome } from "./convert.ts";
import { sandboxFor } from "./launch.ts";
import { probeOnce, probeOptions, type SandboxProbe } from "../sandbox/probe.ts";
import { exposedName, filteredOut } from "./names.ts";
import { nameVerdict } from "../tools/name_rules.ts";

export interface McpToolStatus {
  /** The server's name for it. */
  name: string;
  /** What the model sees. */
  exposed: string;
  offered: boolean;
  /** Why it is not offered. */
  reason: string | null;
}

export interface McpServerStatus {
  name: string;
  transport: "stdio" | "http";
  required: boolean;
  started: boolean;
  error: string | null;
  start_ms: number | null;
  tools: McpToolStatus[];
}

export interface McpServers {
  /** The tools of every started server, each with the verdict of its server's `tools` rules. */
  readonly tools: Tool[];
  readonly status: McpServerStatus[];
  stop(): Promise<void>;
}

export interface StartMcpOptions {
  job_dir: string;
  /** Process environment snapshot: `env:` names are taken from it. */
  env: Record<string, string>;
  events: EventBus;
  session_id: string;
  log: Logger;
  /** `hermes mcp list`: report a required server that fails instead of throwing. */
  reportOnly?: boolean;
  /** The session's shared sandbox probe (`probeOnce`); default: one probe for these servers. */
  probe?: () => Promise<SandboxProbe>;
  /** Kept read-only below the servers' write roots (a protected job's `.git` and own files). */
  read_only?: readonly string[];
}

export async function startMcpServers(
  entries: Readonly<Record<string, McpServerEntry>>,
  options: StartMcpOptions,
): Promise<McpServers> {
  const bwrap = sandboxFor(options.probe ?? probeOnce(probeOptions(options.env)));
  for (const [name, entry] of Object.entries(entries)) {
    if (entry.command !== undefined && entry.sandbox === "off" && !options.reportOnly) {
      options.log.warn(
        `MCP server "${name}" has sandbox: off: it runs on this host without the OS sandbox; the result is ` +
          "marked sandbox: off",
      );
    }
  }
  // A sandbox that cannot start is exit 2 before any model call, as for the shell tool and plugins: never a
  // run that quietly goes on without the servers it asked for.
  const sandboxed = Object.entries(entries).find(([, entry]) =>
    entry.command !== undefined && entry.sandbox !== "off"
  );
  if (sandboxed && !options.reportOnly) {
    await bwrap().catch((error) => {
      if (!(error instanceof ValidationError)) throw error;
      throw new ValidationError(`MCP server "${sandboxed[0]}": ${error.message}`);
    });
  }
  const connections = Object.entries(entries).map(([name, entry]) =>
    new McpConnection(name, entry, {
      job_dir: options.job_dir,
      env: options.env,
      bwrap,
      ...(options.read_only ? { read_only: options.read_only } : {}),
    })
  );
  const status = await Promise.all(connections.map(async (connection): Promise<McpServerStatus> => {
    const started = performance.now();
    const base = {
      name: connection.name,
      transport: connection.entry.url !== undefined ? "http" as const : "stdio" as const,
      required: connection.entry.required ?? false,
    };
    try {
      await connection.start();
      return {
        ...base,
        started: true,
        error: null,
        start_ms: Math.round(performance.now() - started),
        tools: [],
      };
    } catch (error) {
      return { ...base, started: false, error: errorMessage(error), start_ms: null, tools: [] };
    }
  }));
  const stop = () => Promise.all(connections.map((c) => c.stop())).then(() => {});
  const failedRequired = status.filter((s) => !s.started && s.required);
  if (failedRequired.length && !options.reportOnly) {
    await stop();
    throw new ValidationError(
      failedRequired.map((s) => `Cannot start required MCP server "${s.name}": ${s.error}`).join("; "),
    );
  }
  const tools: Tool[] = [];
  const taken = new Set<string>();
  connections.forEach((connection, index) => {
    const server = status[index]!;
    if (!server.started) {
      options.log.warn(`MCP server "${server.name}" did not start: ${server.error}`);
      if (!options.reportOnly) {
        options.events.emit(options.session_id, {
          type: "mcp.error",
          server: server.name,
          error: server.error!,
        });
      }
      return;
    }
    for (const info of connection.tools) {
      const exposed = exposedName(connection.name, info.name);
      const reason = filteredOut(info.name, connection.entry.tools) ??
        (taken.has(exposed) ? `its name ${exposed} is taken by another tool of the server` : null);
      server.tools.push({ name: info.name, exposed, offered: reason === null, reason });
      if (taken.has(exposed)) continue;
      taken.add(exposed);
      tools.push(mcpTool(connection, info, exposed, options.events));
    }
  });
  return { tools, status, stop };
}

function mcpTool(
  connection: McpConnection,
  info: McpConnection["tools"][number],
  exposed: string,
  events: EventBus,
): Tool {
  return {
    spec: {
      name: exposed,
      description: info.description ?? `${info.name} (MCP server ${connection.name})`,
      parameters: info.inputSchema,
    },
    server: connection.name,
    permitted: nameVerdict(info.name, connection.entry.tools, {
      exposed,
      where: `mcp_servers.${connection.name}.tools`,
    }),
    async run(args, context) {
      try {
        const result = await connection.call(info.name, args, {
          signal: context.signal,
          onProgress: (p) =>
            events.emit(context.session_id, {
              type: "tool.progress",
              tool: exposed,
              tool_call_id: context.tool_call_id ?? "",
              server: connection.name,
              progress: p.progress,
              total: p.total ?? null,
              message: p.message ?? null,
            }),
        });
        return toOutcome(result);
      } catch (error) {
        context.signal.throwIfAborted();
        return { status: "error", content: `error: ${errorMessage(error)}` };
      }
    },
  };
}
