/**
 * The plugin host: starts a job's plugins in parallel, each in its own sandboxed subprocess,
 * and exposes them to the agent as hooks, tools and slash commands (`PluginSet`).
 *
 * Failure rules: a plugin whose process fails (timeout, crash, heap) is killed, reported once as a
 * `plugin.error` event and skipped afterwards; an observer that throws is reported and ignored;
 * `pre_tool_call` fails closed.
 */
import { resolve } from "../runtime/core/path.ts";
import { errorMessage, RunError, ValidationError } from "../runtime/core/errors.ts";
import type { EventInput } from "../runtime/core/events.ts";
import type { Hooks } from "../runtime/core/hooks.ts";
import type { PluginEntry } from "../runtime/config/job_schema.ts";
import type { Logger } from "../runtime/core/log.ts";
import type { PluginSet } from "../runtime/agent/seams.ts";
import type { CommandContext, SlashCommand } from "../runtime/agent/slash.ts";
import type { Store } from "../runtime/store/store.ts";
import type { Tool, ToolContext, ToolOutcome } from "../runtime/tools/tool.ts";
import { nameVerdict, type ToolFilter } from "../runtime/tools/name_rules.ts";
import { findDeno } from "../runtime/sandbox/deno_path.ts";
import { probeOptions, probeSandbox, type SandboxProbe } from "../runtime/sandbox/probe.ts";
import type { Bubblewrap } from "../runtime/sandbox/sandbox.ts";
import { pluginHooks, type Report } from "./dispatch.ts";
import { type LoadedPlugin, loadPlugin } from "./load.ts";
import { distinctNames, type PluginManifest, readManifest } from "./manifest.ts";
import { PluginFailure } from "./process.ts";
import { BUILTIN_TOOL_NAMES } from "../runtime/tools/names.ts";
import type { CommandCallContext, HookName, ToolCallContext } from "./sdk.ts";

export interface StartPluginsOptions {
  /** Directory of the job file: plugin paths, granted paths and the plugins' cwd resolve against it. */
  job_dir: string;
  /** Serves `ctx.state` (table `plugin_state`). */
  store: Store;
  /** Where `plugin.error` events go (an EventBus fits). */
  events?: { emit(sessionId: string, input: EventInput<"plugin.error">): unknown };
  log: Logger;
  /** Session for `plugin.error` events of failures outside a call (hook calls use their payload's id). */
  session_id?: string;
  /** The parent environment; plugins see only the variables granted to them. Default: none. */
  env?: Record<string, string>;
  /** The `deno` binary for plugin subprocesses. Default: `findDeno(env)` (HERMES_DENO, this deno, PATH). */
  deno_path?: string;
  /** Aborts start-up (plugins already started are stopped). */
  signal?: AbortSignal;
  /** Applied to error texts put in events and to every payload sent to a plugin (docs/plugins.md). */
  redact?: (text: string) => string;
  /** The session's shared sandbox probe (`probeOnce`); default: probe at start. */
  probe?: () => Promise<SandboxProbe>;
  /** false: do not check entries' `config` against `config_schema` (inspecting plugins without a job). */
  validate_config?: boolean;
  /** Kept read-only below the plugins' write grants (a protected job's `.git` and own files). */
  read_only?: readonly string[];
}

export interface PluginInfo {
  name: string;
  version: string;
  description: string;
  path: string;
  entry: string;
  requested: LoadedPlugin["manifest"]["requested"];
  granted: LoadedPlugin["granted"];
  /** `bubblewrap`: the plugin runs in the OS sandbox; `off`: the entry opted out. */
  sandbox: "bubblewrap" | "off";
  hooks: HookName[];
  commands: { name: string; description: string }[];
  tools: { name: string; description: string; parameters: Record<string, unknown> }[];
  pid: number;
}

/** A started set of plugins. */
export interface PluginHost extends PluginSet {
  /** The loaded plugins in plugin order. */
  readonly plugins: readonly PluginInfo[];
  /** Why a plugin was failed (and is now skipped), or undefined while it is healthy. */
  failure(name: string): string | undefined;
}

/** Starts every plugin in parallel; throws ValidationError (exit 2) naming the first plugin that fails to load. */
export async function startPlugins(
  entries: readonly PluginEntry[],
  options: StartPluginsOptions,
): Promise<PluginHost> {
  const report = (plugin: string, hook: string | null, sessionId: string | undefined, error: unknown) => {
    const text = (options.redact ?? ((t: string) => t))(errorMessage(error));
    options.log.child(plugin).warn(`${hook ?? "plugin"} failed: ${text}`);
    const session = sessionId ?? options.session_id;
    if (session !== undefined) {
      options.events?.emit(session, { type: "plugin.error", plugin, hook, error: text });
    }
  };
  const denoPath = entries.length ? options.deno_path ?? findDeno(options.env ?? {}) : "";
  const bwrap = await pluginSandbox(entries, options);
  // Read first: single-file plugins' names depend on which others share them.
  const manifests = distinctNames(await readManifests(entries, options.job_dir));
  const settled = await Promise.allSettled(entries.map((entry, i) =>
    loadPlugin(entry, {
      manifest: manifests[i]!,
      job_dir: options.job_dir,
      store: options.store,
      log: options.log,
      deno_path: denoPath,
      ...(bwrap ? { bwrap } : {}),
      // A plugin granted `read: true` still does not see the store: its state is served by the host.
      hide: [...options.store.files, ...(options.env?.HERMES_HOME ? [resolve(options.env.HERMES_HOME)] : [])],
      env: options.env ?? {},
      ...(options.read_only ? { read_only: options.read_only } : {}),
      onFailure: (plugin, failure) => report(plugin, failure.hook, failure.session_id, failure),
      ...(options.redact ? { redact: options.redact } : {}),
      ...(options.validate_config === false ? { validate_config: false } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    })
  ));
  const plugins = settled.flatMap((s) => s.status === "fulfilled" ? [s.value] : []);
  const rejected = settled.find((s) => s.status === "rejected");
  const problem = rejected ? rejected.reason : duplicateProblem(plugins);
  if (problem) {
    await Promise.all(plugins.map((plugin) => plugin.process.stop()));
    throw problem;
  }
  // Every entry loaded (else `problem`), so plugins[i] is entries[i].
  return new Host(
    plugins,
    report,
    entries.map((entry, i) => ({ filter: entry.tools, where: `plugins[${i}].tools` })),
  );
}

/**
 * The bubblewrap every sandboxed entry runs in, probed once before any plugin starts: a machine that cannot
 * run it is exit 2 saying how to fix it or opt out, never a silent downgrade. Entries with `sandbox: off`
 * are warned about (the session marks its result).
 */
async function pluginSandbox(
  entries: readonly PluginEntry[],
  options: StartPluginsOptions,
): Promise<Bubblewrap | undefined> {
  for (const entry of entries.filter((entry) => entry.sandbox === "off")) {
    options.log.warn(
      `plugin ${entry.path} has sandbox: off: it runs on this host without the OS sandbox, bounded only by ` +
        "Deno's permissions; the result is marked sandbox: off",
    );
  }
  const sandboxed = entries.find((entry) => entry.sandbox !== "off");
  if (sandboxed === undefined) return undefined;
  const probe = await (options.probe ?? (() => probeSandbox(probeOptions(options.env ?? {}))))();
  if (!probe.ok) {
    throw new ValidationError(
      `Cannot start plugin ${sandboxed.path} in its OS sandbox: ${probe.reason}; ${
        probe.hint.replace("`sandbox: off`", "`sandbox: off` on the plugin entry")
      }`,
    );
  }
  const { ok: _ok, ...bwrap } = probe;
  return bwrap;
}

/** Every entry's manifest; the first failure in plugin order is thrown. */
async function readManifests(entries: readonly PluginEntry[], jobDir: string): Promise<PluginManifest[]> {
  const read = await Promise.allSettled(entries.map((entry) => readManifest(entry.path, jobDir)));
  const failed = read.find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
  return read.map((r) => (r as PromiseFulfilledResult<PluginManifest>).value);
}

/** A name registered twice, or a tool taking a built-in's name (a plugin `shell` would bypass its allow-lists). */
function duplicateProblem(plugins: LoadedPlugin[]): ValidationError | undefined {
  const owners = new Map<string, string>(
    BUILTIN_TOOL_NAMES.map((name) => [`tool "${name}"`, "the built-in tools"]),
  );
  for (const plugin of plugins) {
    const names = [
      `plugin "${plugin.manifest.name}"`,
      ...plugin.registrations.commands.map((c) => `command "/${c.name}"`),
      ...plugin.registrations.tools.map((t) => `tool "${t.name}"`),
    ];
    for (const name of names) {
      const owner = owners.get(name);
      if (owner !== undefined) {
        return new ValidationError(
          `Cannot load plugin "${plugin.manifest.name}": ${name} is already registered by ${
            owner === "the built-in tools" ? owner : `plugin "${owner}"`
          }`,
        );
      }
      owners.set(name, plugin.manifest.name);
    }
  }
}

class Host implements PluginHost {
  readonly plugins: readonly PluginInfo[];
  readonly hooks: Hooks;
  #loaded: LoadedPlugin[];
  #report: Report;

  /** Each plugin's `tools: {allow, deny}` from its entry, and where that is in the job. */
  #rules: readonly { filter: ToolFilter | undefined; where: string }[];

  constructor(
    loaded: LoadedPlugin[],
    report: Report,
    rules: readonly { filter: ToolFilter | undefined; where: string }[] = [],
  ) {
    this.#rules = rules;
    this.#loaded = loaded;
    this.#report = report;
    this.plugins = loaded.map(info);
    this.hooks = pluginHooks(loaded, report);
  }

  failure(name: string): string | undefined {
    return this.#loaded.find((p) => p.manifest.name === name)?.process.failure?.message;
  }

  tools(): Tool[] {
    return this.#loaded.flatMap((plugin, index) =>
      plugin.registrations.tools.map((spec): Tool => ({
        spec,
        permitted: nameVerdict(spec.name, this.#rules[index]?.filter, {
          exposed: spec.name,
          where: this.#rules[index]?.where ?? "plugins[].tools",
        }),
        run: (args, context) => this.#runTool(plugin, spec.name, args, context),
      }))
    );
  }

  commands(): SlashCommand[] {
    return this.#loaded.flatMap((plugin) =>
      plugin.registrations.commands.map((command): SlashCommand => ({
        name: command.name,
        description: command.description,
        run: (args, context) => this.#runCommand(plugin, command.name, args, context),
      }))
    );
  }

  async stop(): Promise<void> {
    await Promise.all(this.#loaded.map((plugin) => plugin.process.stop()));
  }

  async #runTool(
    plugin: LoadedPlugin,
    tool: string,
    args: Record<string, unknown>,
    context: ToolContext,
  ): Promise<ToolOutcome> {
    const problem = plugin.argumentChecks.get(tool)!(args);
    if (problem) return { status: "error", content: `error: invalid arguments for ${tool}: ${problem}` };
    const label = `tool ${tool}`;
    try {
      const result = await plugin.process.call("tool", {
        name: tool,
        args,
        context: { session_id: context.session_id } satisfies ToolCallContext,
      }, { timeout_ms: plugin.timeout_ms, label, session_id: context.session_id, signal: context.signal });
      return { status: "ok", content: String(result) };
    } catch (error) {
      if (context.signal.aborted) throw error;
      if (!(error instanceof PluginFailure)) {
        this.#report(plugin.manifest.name, label, context.session_id, error);
      }
      return { status: "error", content: `error: plugin "${plugin.manifest.name}": ${errorMessage(error)}` };
    }
  }

  async #runCommand(
    plugin: LoadedPlugin,
    command: string,
    args: string,
    context: CommandContext,
  ): Promise<string> {
    const label = `command /${command}`;
    try {
      const result = await plugin.process.call("command", {
        name: command,
        args,
        context: { session_id: context.session_id, source: context.source } satisfies CommandCallContext,
      }, { timeout_ms: plugin.timeout_ms, label, session_id: context.session_id, signal: context.signal });
      return String(result);
    } catch (error) {
      if (context.signal.aborted) throw error;
      if (!(error instanceof PluginFailure)) {
        this.#report(plugin.manifest.name, label, context.session_id, error);
      }
      throw new RunError(`/${command} (plugin "${plugin.manifest.name}") failed: ${errorMessage(error)}`, {
        reason: "plugin_error",
        cause: error,
      });
    }
  }
}

function info(plugin: LoadedPlugin): PluginInfo {
  const { manifest, registrations } = plugin;
  return {
    name: manifest.name,
    version: manifest.version,
    description: manifest.description,
    path: manifest.root,
    entry: manifest.entry,
    requested: manifest.requested,
    granted: plugin.granted,
    sandbox: plugin.sandboxed ? "bubblewrap" : "off",
    hooks: registrations.hooks,
    commands: registrations.commands,
    tools: registrations.tools,
    pid: plugin.process.pid,
  };
}
