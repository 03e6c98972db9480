/**
 * The plugins of a stored session's own job for commands that compact it out of band (`sessions compact`,
 * docs/compaction.md): a job's memory plugin must learn of the compaction as it would in a run. Entries that
 * config.yaml already gives (a job's plugins start with the global ones) are left to the global hooks, so no
 * plugin hears a compaction twice. Started on first use, resolved against the job's directory.
 */
import type { Cli } from "../_cli.ts";
import { errorMessage } from "../../runtime/core/errors.ts";
import { type Hooks, noHooks } from "../../runtime/core/hooks.ts";
import type { PluginEntry } from "../../runtime/config/job_schema.ts";
import type { Store } from "../../runtime/store/store.ts";
import type { HookScope } from "./_hooks.ts";

export async function jobHooks(
  cli: Cli,
  store: Store,
  job: { spec: { plugins?: PluginEntry[] | undefined }; dir: string },
  sessionId: string,
): Promise<HookScope> {
  const global = await globalEntries(cli);
  const own = (job.spec.plugins ?? []).filter((entry) => !global.has(JSON.stringify(entry)));
  if (own.length === 0) return { hooks: noHooks, failed: false, close: () => Promise.resolve() };
  const { lazyPlugins } = await import("../../plugins/lazy.ts");
  const plugins = lazyPlugins(own, {
    job_dir: job.dir,
    store,
    log: cli.log.child("plugins"),
    session_id: sessionId,
    env: cli.env,
    redact: cli.redact,
    signal: cli.signal,
  });
  let failed = false;
  return {
    hooks: {
      ...plugins.hooks,
      postCompaction: async (payload) => {
        try {
          await plugins.hooks.postCompaction(payload);
        } catch (error) {
          failed = true;
          cli.log.error(
            `post_compaction could not be delivered to the job's plugins: ${errorMessage(error)}`,
          );
        }
      },
    },
    get failed() {
      return failed;
    },
    close: () => plugins.close(),
  };
}

/** Global hooks, then the job's own, for each post_compaction. */
export function bothHooks(global: Hooks, own: Hooks): Hooks {
  return {
    ...global,
    postCompaction: async (payload) => {
      await global.postCompaction(payload);
      await own.postCompaction(payload);
    },
  };
}

async function globalEntries(cli: Cli): Promise<Set<string>> {
  const path = `${cli.home}/config.yaml`;
  if (!(await Deno.stat(path).then(() => true, () => false))) return new Set();
  const config = (await import("../../runtime/config/job_file.ts")).loadUserConfig(path);
  return new Set((config?.plugins ?? []).map((entry) => JSON.stringify(entry)));
}
