/**
 * How one `mcp_servers` entry is reached (docs/mcp.md): a stdio command wrapped in the OS sandbox, or a
 * Streamable HTTP url. The SDK does the protocol; this module only decides what is spawned, with which
 * environment and which grants.
 *
 * A stdio server sees only what it needs to start (`visible: only_granted`): the system directories, the
 * directory of its command (and the install prefix above a `bin/` or `node_modules/.bin/`), its cwd, the
 * paths its args name, and the entry's `sandbox.read`; it may write only `sandbox.write` (and ~/.npm for
 * npx, whose cache it is); no network unless `sandbox.net` (a host list: the filtering proxy's bridge). bwrap's `--die-with-parent` and its PID
 * namespace kill the server and its children when Hermes dies, even by SIGKILL.
 */
import { basename, delimiter, dirname, isAbsolute, resolve } from "../core/path.ts";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { McpServerEntry } from "../config/job_schema.ts";
import { errorMessage, ValidationError } from "../core/errors.ts";
import type { SandboxProbe } from "../sandbox/probe.ts";
import { type Bubblewrap, wrapCommand } from "../sandbox/sandbox.ts";
import { argumentPaths, configuredLimits, SYSTEM_DIRS } from "../sandbox/policy.ts";
import { realPathOrNull } from "../core/fs.ts";
import { findBridgeTools, forwarderEnv, type NetBridge, openNetBridge } from "../sandbox/net_bridge.ts";
import { parseHostList } from "../sandbox/net_hosts.ts";
import { findDenoOrNull } from "../sandbox/deno_path.ts";

/**
 * The SDK adds these from Hermes's own environment to whatever env it is given: they are always set
 * here, so their values are ours to choose.
 */
const BASE_ENV = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"] as const;

export interface LaunchContext {
  job_dir: string;
  /** The process environment snapshot (config loading's), source of `env:` names and the base. */
  env: Record<string, string>;
  /** Lines the server writes to stderr (kept for error messages, logged at debug). */
  onStderr: (line: string) => void;
  /** Cached probe, shared by the session's servers. */
  bwrap: () => Promise<Bubblewrap>;
  /** Kept read-only below the server's write roots (a protected job's `.git` and own files). */
  read_only?: readonly string[];
}

/** The server's environment: the base (always set) and what the entry lists (names or values), nothing else. */
export function serverEnv(entry: McpServerEntry, env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/", TERM: "dumb" };
  const listed = Array.isArray(entry.env) ? entry.env : [];
  for (const name of [...BASE_ENV, ...listed]) if (env[name] !== undefined) out[name] = env[name]!;
  for (const name of BASE_ENV) out[name] ??= "";
  if (Array.isArray(entry.env) || entry.env === undefined) return out;
  return { ...out, ...expandAll(entry.env, env) };
}

/** `{{ env.NAME }}` in header and env values, substituted at each start (the stored job keeps the template). */
export function expandAll(
  values: Record<string, string>,
  env: Record<string, string>,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([key, value]) => [
      key,
      value.replace(/\{\{\s*env\.([A-Za-z_][\w-]*)\s*\}\}/g, (_all, name: string) => {
        const found = env[name];
        if (found === undefined) throw new Error(`{{ env.${name} }} in ${key} is not set`);
        return found;
      }),
    ]),
  );
}

/** A fresh transport for one start of the server (a restart needs a new one). */
export async function createTransport(entry: McpServerEntry, context: LaunchContext): Promise<Transport> {
  if (entry.url !== undefined) {
    const { StreamableHTTPClientTransport } = await import(
      "@modelcontextprotocol/sdk/client/streamableHttp.js"
    );
    return new StreamableHTTPClientTransport(new URL(entry.url), {
      requestInit: { headers: expandAll(entry.headers ?? {}, context.env) },
    });
  }
  const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
  const command = entry.command!;
  const args = entry.args ?? [];
  const cwd = resolve(context.job_dir, entry.cwd ?? ".");
  const env = serverEnv(entry, context.env);
  let params: { command: string; args: string[]; env: Record<string, string>; cwd: string };
  let bridge: NetBridge | null = null;
  if (entry.sandbox === "off") {
    params = { command, args, env, cwd };
  } else {
    const bwrap = await context.bwrap();
    const policy = {
      ...sandboxPolicy(entry, { cwd, env, job_dir: context.job_dir }),
      ...(context.read_only ? { read_only: context.read_only } : {}),
    };
    bridge = Array.isArray(policy.net) ? await serverBridge(policy.net, bwrap, context) : null;
    try {
      const wrapped = wrapCommand([command, ...args], policy, { bwrap, ...(bridge ? { bridge } : {}) });
      params = { command: wrapped.cmd, args: wrapped.args, env: wrapped.env, cwd: wrapped.cwd };
    } catch (error) {
      await bridge?.close();
      throw error;
    }
  }
  const transport = new StdioClientTransport({ ...params, stderr: "pipe" });
  if (bridge) {
    const open = bridge;
    // Waits for the spawn (the launcher opens the FIFOs); a bridge that cannot start leaves the server
    // without any route, and says why on its stderr lines.
    open.attach().catch((error) => context.onStderr(`hermes: ${errorMessage(error)}`));
    const close = transport.close.bind(transport);
    transport.close = async () => {
      try {
        await close();
      } finally {
        await open.close();
      }
    };
  }
  let buffered = "";
  transport.stderr?.on("data", (chunk: Uint8Array | string) => {
    buffered += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) if (line.trim()) context.onStderr(line);
  });
  return transport;
}

/** The proxy and bridge of a stdio server's host list (runtime/sandbox/net_bridge.ts). */
async function serverBridge(
  hosts: readonly string[],
  bwrap: Bubblewrap,
  context: LaunchContext,
): Promise<NetBridge> {
  const tools = findBridgeTools(findDenoOrNull(context.env));
  if (typeof tools === "string") {
    throw new ValidationError(`Cannot enforce the MCP server's sandbox.net host list here: ${tools}`);
  }
  return await openNetBridge(parseHostList(hosts), {
    privateDir: dirname(bwrap.seccomp.path),
    tools,
    env: forwarderEnv(context.env),
    onRefusal: (refusal) =>
      context.onStderr(`hermes: sandbox network: refused ${refusal.host}:${refusal.port} ${refusal.reason}`),
  });
}

/** The bubblewrap of `probe`; a machine without it cannot start sandboxed servers (say why and how). */
export function sandboxFor(probe: () => Promise<SandboxProbe>): () => Promise<Bubblewrap> {
  return () =>
    probe().then((probe) => {
      if (!probe.ok) {
        throw new ValidationError(
          `Cannot start an MCP server in its OS sandbox: ${probe.reason}; ${
            probe.hint.replace("`sandbox: off`", "`sandbox: off` on the server")
          }`,
        );
      }
      const { ok: _ok, ...bwrap } = probe;
      return bwrap;
    });
}

export function sandboxPolicy(
  entry: McpServerEntry,
  at: { cwd: string; env: Record<string, string>; job_dir: string },
) {
  const sandbox = entry.sandbox === "off" ? {} : entry.sandbox ?? {};
  const fromJob = (path: string) => resolve(at.job_dir, path);
  const read = [
    ...commandDirs(entry.command!, at.env.PATH ?? ""),
    ...interpreterDirs(entry.command!, at.env.PATH ?? ""),
    at.cwd,
    ...argumentPaths(entry.args ?? [], at.cwd).map((found) => found.path),
    ...(sandbox.read ?? []).map(fromJob),
  ].filter((path) => !SYSTEM_DIRS.some((dir) => path === dir || path.startsWith(`${dir}/`)));
  const write = (sandbox.write ?? []).map(fromJob);
  // npx keeps its downloads in ~/.npm; without it every start would fail to write its cache.
  const npmCache = at.env.HOME ? `${at.env.HOME}/.npm` : null;
  if (npmCache && ["npx", "npm"].includes(basename(entry.command!))) {
    Deno.mkdirSync(npmCache, { recursive: true });
    write.push(npmCache);
  }
  return {
    visible: "only_granted" as const,
    read: [...new Set(read)],
    write,
    net: sandbox.net ?? false,
    ...configuredLimits(sandbox.limits),
    env: at.env,
    cwd: at.cwd,
  };
}

/** The command's directory and, for `…/bin/x` or `…/node_modules/.bin/x`, the install prefix above it. */
function commandDirs(command: string, path: string): string[] {
  const found = isAbsolute(command) || command.includes("/") ? resolve(command) : which(command, path);
  if (found === null) return [];
  const dirs = new Set<string>();
  for (const file of [found, realPathOrNull(found)]) {
    if (file === null) continue;
    const dir = dirname(file);
    // `/bin/sh`'s prefix would be the root, which no sandbox shows (and /bin is shown anyway).
    dirs.add(["bin", ".bin"].includes(basename(dir)) && dirname(dir) !== "/" ? dirname(dir) : dir);
  }
  return [...dirs];
}

/**
 * The directories of a script command's interpreter (`#!/usr/bin/env node`, `#!/opt/node/bin/node`): the
 * npm bins of reference servers are such scripts, and a node installed outside the system directories
 * (nvm, actions/setup-node, a tarball in /opt) is otherwise missing inside ("env: 'node': No such file").
 */
function interpreterDirs(command: string, path: string): string[] {
  const found = isAbsolute(command) || command.includes("/") ? resolve(command) : which(command, path);
  if (found === null) return [];
  let head: string;
  try {
    using file = Deno.openSync(found);
    const bytes = new Uint8Array(256);
    head = new TextDecoder().decode(bytes.subarray(0, file.readSync(bytes) ?? 0));
  } catch {
    return [];
  }
  const words = /^#!\s*(\S+)(?:[ \t]+([^\n]*))?/.exec(head);
  if (!words) return [];
  const [program, rest] = [words[1]!, (words[2] ?? "").trim().split(/\s+/)];
  // `env [-S] NAME …`: NAME is looked up on the PATH the server gets.
  const name = basename(program) === "env"
    ? rest.find((word) => word !== "" && !word.startsWith("-"))
    : program;
  return name === undefined ? [] : commandDirs(name, path);
}

function which(command: string, path: string): string | null {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    try {
      if (Deno.statSync(`${dir}/${command}`).isFile) return `${dir}/${command}`;
    } catch {
      // not here
    }
  }
  return null;
}
