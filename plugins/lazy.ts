/**
 * Plugins started on first use: for commands that act on stored sessions (`sessions delete|archive|prune`
 * fire `on_session_delete` on the global plugins), so that an operation that calls no hook starts none.
 */
import { type Hooks, noHooks } from "../runtime/core/hooks.ts";
import type { PluginEntry } from "../runtime/config/job_schema.ts";
import { type PluginHost, startPlugins, type StartPluginsOptions } from "./host.ts";

export interface LazyPlugins {
  readonly hooks: Hooks;
  /** Stops the plugins if they were started. */
  close(): Promise<void>;
}

const HOOK_METHODS: readonly (keyof Hooks)[] = [
  "onSessionStart",
  "onSessionEnd",
  "preLlmCall",
  "postLlmCall",
  "preToolCall",
  "postToolCall",
  "postCompaction",
  "onSessionDelete",
  "onLoopTick",
];

/** Hooks that start `entries` on the first call; a load error rejects that call (ValidationError). */
export function lazyPlugins(entries: readonly PluginEntry[], options: StartPluginsOptions): LazyPlugins {
  if (entries.length === 0) return { hooks: noHooks, close: () => Promise.resolve() };
  let started: Promise<PluginHost> | undefined;
  const host = () => started ??= startPlugins(entries, options);
  const hooks = Object.fromEntries(
    HOOK_METHODS.map((
      method,
    ) => [
      method,
      async (payload: never) => ((await host()).hooks[method] as (p: never) => unknown)(payload),
    ]),
  ) as unknown as Hooks;
  return {
    hooks,
    async close() {
      const running = await started?.catch(() => undefined);
      await running?.stop();
    },
  };
}
