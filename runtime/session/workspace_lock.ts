/**
 * One writer per checkout (docs/workspaces.md): a session that may write its working tree holds the tree's
 * lock in the store, keyed by the tree's real path, for as long as its run lasts — refreshed like a lease,
 * so a holder that died is taken over (at once on its own host, after the lock's time on another). A second
 * session is refused with `workspace_busy`, naming the holder, unless the job says `workspace: {shared: true}`.
 */
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import { currentProcess } from "../core/process_identity.ts";
import { realPathOrNull } from "../core/fs.ts";
import type { ResolvedJob } from "../config/job.ts";
import { enclosingRepo } from "../sandbox/git_repo.ts";
import type { SessionStore, WorkspaceLock } from "../store/store.ts";
import { ExitCode } from "../core/errors.ts";
import type { Ending } from "./outcome.ts";

/** How long a lock stays held without a refresh; refreshed every third of it. */
const LOCK_TTL_MS = 60_000;

export interface WorkspaceHold {
  release(): Promise<void>;
}

/**
 * Whether the job can write the tree it runs in: write_file, a shell whose sandbox has write roots (or no
 * sandbox), or output.file (always inside the job's directory).
 */
export function writesItsTree(spec: ResolvedJob["spec"]): boolean {
  const tools = spec.tools ?? {};
  const shell = tools.shell;
  const shellWrites = shell !== undefined &&
    (shell.sandbox === "off" || (shell.sandbox?.write ?? tools.write_file?.paths ?? []).length > 0);
  return tools.write_file !== undefined || shellWrites || spec.output?.file !== undefined;
}

/** The working tree a job in `dir` writes: its repository's root, else the directory itself (real paths). */
export function workingTree(dir: string): string {
  const real = realPathOrNull(dir) ?? dir;
  return enclosingRepo(real)?.root ?? real;
}

/** Takes the tree's lock for the session, or says who holds it. */
export async function holdWorkspace(
  store: SessionStore,
  options: { path: string; sessionId: string; host: string; clock: Clock; log: Logger },
): Promise<{ hold: WorkspaceHold } | { busy: WorkspaceLock }> {
  const { path, sessionId, clock, log } = options;
  const holder = currentProcess(options.host);
  const taken = await store.acquireWorkspace({
    path,
    sessionId,
    holder,
    now: clock.now(),
    ttlMs: LOCK_TTL_MS,
  });
  if (!taken.acquired) return { busy: taken.current };
  if (taken.took_over) {
    log.info(
      `workspace ${path}: took the lock over (${
        taken.took_over === "expired" ? "expired" : "its holder died"
      })`,
    );
  }
  // Refreshed on the session's clock (as the owner lease is), until released.
  const stop = new AbortController();
  (async () => {
    while (!stop.signal.aborted) {
      await clock.sleep(LOCK_TTL_MS / 3, stop.signal).catch(() => {});
      if (stop.signal.aborted) return;
      const held = await store.refreshWorkspace({
        path,
        nonce: holder.nonce,
        now: clock.now(),
        ttlMs: LOCK_TTL_MS,
      })
        .catch((error) => {
          log.warn(`workspace ${path}: cannot refresh the lock: ${error}`);
          return true;
        });
      if (!held) log.warn(`workspace ${path}: the lock was lost (another session may write the tree now)`);
    }
  })();
  return {
    hold: {
      async release() {
        stop.abort();
        await store.releaseWorkspace({ path, nonce: holder.nonce }).catch((error) =>
          log.warn(`workspace ${path}: cannot release the lock: ${error}`)
        );
      },
    },
  };
}

/** How a run refused because another session writes its tree ends: exit 2, before any model call. */
export function busyEnding(error: string): Ending {
  return { status: "failed", terminal_reason: "workspace_busy", exit_code: ExitCode.invalid, error };
}

/** The error of a run refused because another session writes its tree. */
export function busyMessage(lock: WorkspaceLock): string {
  const { holder } = lock;
  return `Cannot write ${lock.path}: session ${lock.session_id} (pid ${holder.pid} on ${holder.host}) is ` +
    "writing this checkout; run it again when that session has ended, give this job its own worktree " +
    "(workspace: {isolation: worktree}) or let it share the checkout (workspace: {shared: true})";
}
