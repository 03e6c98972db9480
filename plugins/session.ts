/**
 * The plugins part of a session, for the session opener: none for a job without plugins, else the started
 * host. The host is imported only then: start-up time the other jobs need not pay.
 */
import type { PluginEntry } from "../runtime/config/job_schema.ts";
import type { PluginHost, StartPluginsOptions } from "./host.ts";

export type { PluginHost, PluginInfo } from "./host.ts";

export async function startSessionPlugins(
  entries: readonly PluginEntry[] | undefined,
  options: StartPluginsOptions,
): Promise<PluginHost | undefined> {
  if (!entries?.length) return undefined;
  return await (await import("./host.ts")).startPlugins(entries, options);
}
