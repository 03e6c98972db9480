/**
 * Loading one plugin: manifest → grant check → config check → module-graph preflight → sandboxed
 * subprocess → `register(ctx)` → registrations checked. Every failure is a ValidationError naming the plugin.
 */
import { pathToFileURL } from "node:url";
import { parseDuration, parseSize } from "../runtime/core/duration.ts";
import { errorMessage, ValidationError } from "../runtime/core/errors.ts";
import type { PluginEntry } from "../runtime/config/job_schema.ts";
import type { Logger } from "../runtime/core/log.ts";
import type { Store } from "../runtime/store/store.ts";
import type { ToolSpec } from "../runtime/core/types.ts";
import { compileJsonSchema, type SchemaCheck } from "./json_schema.ts";
import { type PluginManifest, readManifest } from "./manifest.ts";
import {
  absoluteGrant,
  grantedEnv,
  missingGrants,
  permissionFlags,
  type Permissions,
  resolveRunGrant,
} from "./permissions.ts";
import { oneLine, preflight } from "./preflight.ts";
import { pluginArgv, PluginFailure, PluginProcess } from "./process.ts";
import { type PluginCommand, pluginCommand } from "./sandbox_policy.ts";
import type { Bubblewrap } from "../runtime/sandbox/sandbox.ts";
import {
  findBridgeTools,
  forwarderEnv,
  type NetBridge,
  openNetBridge,
} from "../runtime/sandbox/net_bridge.ts";
import { parseHostList } from "../runtime/sandbox/net_hosts.ts";
import { dirname } from "../runtime/core/path.ts";
import type { HookName } from "./sdk.ts";
import { pluginIdentity, PluginStateTable } from "./state.ts";
import type { Redactor } from "../runtime/core/redact.ts";

export const HOOK_NAMES: readonly HookName[] = [
  "on_session_start",
  "on_session_end",
  "pre_llm_call",
  "post_llm_call",
  "pre_tool_call",
  "post_tool_call",
  "post_compaction",
  "on_session_delete",
  "on_loop_tick",
];
const COMMAND_NAME = /^[a-z][a-z0-9_.-]*$/;
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const DEFAULT_HOOK_TIMEOUT = "30s";
export const DEFAULT_MAX_MEMORY = "256MiB";
/** The cap counts the resident set of the whole process tree; below this a plugin could not start. */
const MIN_MEMORY_MB = 64;

export interface LoadOptions {
  job_dir: string;
  store: Store;
  log: Logger;
  deno_path: string;
  /** The working bubblewrap (`probeSandbox`); needed unless the entry says `sandbox: off`. */
  bwrap?: Bubblewrap;
  /** Host paths hidden from a plugin granted `read: true` (the store's files, the Hermes home). */
  hide?: readonly string[];
  /** Kept read-only below the plugin's write grants (a protected job's `.git` and own files). */
  read_only?: readonly string[];
  /** The parent environment; only the granted variables reach the plugin. */
  env: Record<string, string>;
  /** A loaded plugin's process failed (not called for failures while loading). */
  onFailure(plugin: string, failure: PluginFailure): void;
  /** false: skip `config_schema` (inspecting a plugin without a job, `hermes plugins check DIR`). */
  validate_config?: boolean;
  signal?: AbortSignal;
  /** The plugin's manifest when already read (startPlugins reads them all to keep names distinct). */
  manifest?: PluginManifest;
  /** Replaces secrets in every payload sent to the plugin. */
  redact?: Redactor;
}

export interface Registrations {
  hooks: HookName[];
  commands: { name: string; description: string }[];
  tools: ToolSpec[];
}

export interface LoadedPlugin {
  manifest: PluginManifest;
  granted: Permissions;
  /** False for an entry with `sandbox: off`. */
  sandboxed: boolean;
  timeout_ms: number;
  max_memory_mb: number;
  process: PluginProcess;
  registrations: Registrations;
  /** Argument validators of the plugin's tools, by tool name. */
  argumentChecks: Map<string, SchemaCheck>;
}

/**
 * In the OS sandbox a host list holds for the whole process tree (its own network namespace and the filtering
 * proxy, runtime/sandbox/net_bridge.ts). With `sandbox: off` it holds for the plugin's own code only (Deno's
 * --allow-net), not for a program it runs or native code it loads: that combination is refused rather than
 * granted in name only.
 */
function unenforceableHosts(granted: Permissions, sandboxed: boolean): string | null {
  if (sandboxed || !Array.isArray(granted.net) || granted.net.length === 0) return null;
  const escapes = [
    ...(granted.run === true || (Array.isArray(granted.run) && granted.run.length) ? ["run"] : []),
    ...(granted.ffi === true || (Array.isArray(granted.ffi) && granted.ffi.length) ? ["ffi"] : []),
  ];
  if (escapes.length === 0) return null;
  return `permissions.net lists hosts (${granted.net.join(", ")}) but permissions.${
    escapes.join(" and ")
  } is ` +
    "granted too, and with sandbox: off a program it runs or native code it loads is not bound by the host " +
    "list and would reach every host; keep the OS sandbox (it holds the list for every child), drop " +
    escapes.join(" and ") + ", or grant net: true to give the host's whole network openly";
}

/** The proxy and bridge of a sandboxed plugin's host list, or null (no list, or no sandbox). */
async function pluginBridge(
  granted: Permissions,
  sandbox: Bubblewrap | "off",
  options: LoadOptions,
  name: string,
): Promise<NetBridge | null> {
  if (sandbox === "off" || !Array.isArray(granted.net) || granted.net.length === 0) return null;
  const tools = findBridgeTools(options.deno_path);
  if (typeof tools === "string") {
    throw new Error(`permissions.net's host list cannot be enforced here: ${tools}`);
  }
  const log = options.log.child(name);
  return await openNetBridge(parseHostList(granted.net), {
    privateDir: dirname(sandbox.seccomp.path),
    tools,
    env: forwarderEnv(options.env),
    onRefusal: (refusal) =>
      log.warn(`sandbox network: refused ${refusal.host}:${refusal.port} ${refusal.reason}`),
  });
}

export async function loadPlugin(entry: PluginEntry, options: LoadOptions): Promise<LoadedPlugin> {
  if (entry.isolation === "worker") {
    throw new ValidationError(
      `Cannot load plugin "${entry.path}": isolation "worker" is not supported (a Worker is not a sandbox); remove it to run the plugin in a subprocess`,
    );
  }
  const manifest = options.manifest ?? await readManifest(entry.path, options.job_dir);
  const fail = (why: string): never => {
    throw new ValidationError(`Cannot load plugin "${manifest.name}" (${entry.path}): ${why}`);
  };
  const granted = entry.permissions ?? {};
  const missing = missingGrants(manifest.requested, granted, options.job_dir);
  if (missing.length) fail(`it requests permissions the job does not grant: ${missing.join(", ")}`);
  const unenforceable = unenforceableHosts(granted, entry.sandbox !== "off");
  if (unenforceable) fail(unenforceable);
  const config = entry.config ?? {};
  if (manifest.config_schema && options.validate_config !== false) {
    const problem = checkerFor(manifest.config_schema, (why) => fail(`plugin.json config_schema: ${why}`))(
      config,
    );
    if (problem) fail(`config${problem.startsWith("(root)") ? problem.slice(6) : `.${problem}`}`);
  }
  const timeout_ms = parseDuration(entry.hook_timeout ?? DEFAULT_HOOK_TIMEOUT);
  const max_memory_mb = Math.ceil(parseSize(entry.max_memory ?? DEFAULT_MAX_MEMORY) / 1024 ** 2);
  if (max_memory_mb < MIN_MEMORY_MB) {
    fail(
      `max_memory ${entry.max_memory} is below ${MIN_MEMORY_MB}MiB: the cap counts the whole process, and ` +
        "the Deno runtime alone holds about 30 MiB",
    );
  }
  let command: PluginCommand | undefined;
  let bridge: NetBridge | null = null;
  try {
    const runnable = resolveRunGrant(granted, { job_dir: options.job_dir, path: options.env.PATH });
    const flags = permissionFlags(runnable, { root: manifest.root, job_dir: options.job_dir });
    const sandbox = entry.sandbox === "off" ? "off" : options.bwrap;
    if (sandbox === undefined) throw new TypeError("Cannot start a plugin in its sandbox: no bwrap given");
    bridge = await pluginBridge(granted, sandbox, options, manifest.name);
    command = pluginCommand(pluginArgv(options.deno_path, { flags, max_memory_mb }), {
      ...(bridge ? { bridge } : {}),
      sandbox,
      granted: absoluteGrant(runnable, options.job_dir),
      root: manifest.root,
      job_dir: options.job_dir,
      env: grantedEnv(runnable, options.env),
      max_memory_bytes: max_memory_mb * 1024 ** 2,
      ...(options.hide ? { hide: options.hide } : {}),
      ...(options.read_only ? { read_only: options.read_only } : {}),
      ...(options.env.HOME ? { home: options.env.HOME } : {}),
    });
  } catch (error) {
    await bridge?.close();
    if (error instanceof TypeError) throw error;
    fail(errorMessage(error));
  }
  const refused = await preflight(manifest.entry, manifest.root, {
    deno_path: options.deno_path,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (refused) {
    await bridge?.close();
    fail(refused);
  }

  let loaded = false;
  // Keyed by the plugin's identity, not its self-declared name: another plugin cannot claim it.
  const state = new PluginStateTable(options.store, pluginIdentity(manifest));
  const process = new PluginProcess({
    command: command!,
    max_memory_mb,
    log: options.log.child(manifest.name),
    serve: (method, params) => state.serve(method, params),
    onFailure: (failure) => loaded && options.onFailure(manifest.name, failure),
    ...(options.redact ? { redact: options.redact } : {}),
  });
  try {
    const reply = await process.call(
      "init",
      { name: manifest.name, entry: pathToFileURL(manifest.entry).href, config },
      { timeout_ms, label: "register", ...(options.signal ? { signal: options.signal } : {}) },
    );
    const registrations = checkRegistrations(reply, fail);
    const argumentChecks = new Map(
      registrations.tools.map((tool) => [
        tool.name,
        checkerFor(tool.parameters, (why) => fail(`tool "${tool.name}" parameters: ${why}`)),
      ]),
    );
    loaded = true;
    const sandboxed = entry.sandbox !== "off";
    return {
      manifest,
      granted,
      sandboxed,
      timeout_ms,
      max_memory_mb,
      process,
      registrations,
      argumentChecks,
    };
  } catch (error) {
    await process.stop();
    if (error instanceof ValidationError) throw error;
    if (options.signal?.aborted) throw error;
    const why = oneLine(errorMessage(error));
    return fail(
      error instanceof PluginFailure ? why : why.replace(/^register\(\) threw: /, "register(ctx) threw: "),
    );
  }
}

function checkerFor(schema: Record<string, unknown>, fail: (why: string) => never): SchemaCheck {
  try {
    return compileJsonSchema(schema);
  } catch (error) {
    return fail(oneLine(errorMessage(error)));
  }
}

/** The plugin reports what it registered; the host trusts none of it unchecked. */
function checkRegistrations(reply: unknown, fail: (why: string) => never): Registrations {
  const r = reply as Partial<Registrations> | null;
  if (!r || !Array.isArray(r.hooks) || !Array.isArray(r.commands) || !Array.isArray(r.tools)) {
    return fail("the plugin process sent malformed registrations");
  }
  for (const hook of r.hooks) {
    if (!HOOK_NAMES.includes(hook)) fail(`unknown hook "${hook}": expected one of ${HOOK_NAMES.join(", ")}`);
  }
  for (const command of r.commands) {
    if (!COMMAND_NAME.test(String(command?.name))) {
      fail(`invalid command name "${command?.name}": expected lower-case letters, digits, '_', '.' or '-'`);
    }
  }
  for (const tool of r.tools) {
    if (!TOOL_NAME.test(String(tool?.name))) {
      fail(`invalid tool name "${tool?.name}": expected 1 to 64 letters, digits, '_' or '-'`);
    }
    const parameters = tool.parameters as Record<string, unknown> | null;
    if (!parameters || typeof parameters !== "object" || parameters.type !== "object") {
      fail(`tool "${tool.name}" parameters: expected a JSON Schema with "type": "object"`);
    }
  }
  return r as Registrations;
}
