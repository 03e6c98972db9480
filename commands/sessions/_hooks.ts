/** Where `sessions delete|archive|prune|compact` get the hooks of the global plugins (docs/plugins.md). */
import type { Cli } from "../_cli.ts";
import { errorMessage } from "../../runtime/core/errors.ts";
import { type Hooks, noHooks } from "../../runtime/core/hooks.ts";
import type { Store } from "../../runtime/store/store.ts";
import { withStore } from "./_context.ts";

export interface HookScope {
  readonly hooks: Hooks;
  /** True when a hook call failed (it was logged; the store change it reported had been committed). */
  readonly failed: boolean;
  /** Stops the plugins if any were started. */
  close(): Promise<void>;
}

/**
 * The plugins listed in HERMES_HOME/config.yaml, started on the first hook call (an unknown id or a refusal
 * starts none). A broken config.yaml fails here, before anything changes. A hook that fails after the commit
 * (a plugin that does not load, say) cannot undo it: it is logged and `failed` is set, so the command can
 * still report what it changed and exit 1.
 */
export async function globalHooks(cli: Cli, store: Store): Promise<HookScope> {
  const configPath = `${cli.home}/config.yaml`;
  const hasConfig = await Deno.stat(configPath).then(() => true, () => false);
  // The job loader (YAML, zod) and the plugin host are loaded only when there is a config to read.
  const entries = hasConfig
    ? (await import("../../runtime/config/job_file.ts")).loadUserConfig(configPath)?.plugins ?? []
    : [];
  if (entries.length === 0) return { hooks: noHooks, failed: false, close: () => Promise.resolve() };
  const { lazyPlugins } = await import("../../plugins/lazy.ts");
  const plugins = lazyPlugins(entries, {
    job_dir: cli.home,
    store,
    log: cli.log,
    env: cli.env,
    redact: cli.redact,
    signal: cli.signal,
  });
  let failed = false;
  const guarded = <P>(name: string, call: (payload: P) => Promise<void>) => async (payload: P) => {
    try {
      await call(payload);
    } catch (error) {
      failed = true;
      cli.log.error(`${name} could not be delivered to the global plugins: ${errorMessage(error)}`);
    }
  };
  return {
    hooks: {
      ...plugins.hooks,
      onSessionDelete: guarded("on_session_delete", plugins.hooks.onSessionDelete),
      postCompaction: guarded("post_compaction", plugins.hooks.postCompaction),
    },
    get failed() {
      return failed;
    },
    close: () => plugins.close(),
  };
}

/**
 * Runs `fn` with the store and the global plugins' hooks, then stops the plugins (before the store closes:
 * they keep their state in it). Resolves with `fn`'s exit code, or 1 when a hook could not be delivered.
 */
export function withGlobalHooks(
  cli: Cli,
  fn: (store: Store, hooks: Hooks) => Promise<number>,
): Promise<number> {
  return withStore(cli, async (store) => {
    const scope = await globalHooks(cli, store);
    let code: number;
    try {
      code = await fn(store, scope.hooks);
    } finally {
      await scope.close();
    }
    return scope.failed ? Math.max(code, 1) : code;
  });
}
