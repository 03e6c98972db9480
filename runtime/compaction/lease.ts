/**
 * Keeping a durable compaction lease (docs/compaction.md) alive while a summary runs. Taking, refreshing and releasing
 * it are store operations (`acquireLease`, `refreshLease`, `releaseLease`), qualified by the holder's nonce.
 */
import type { Clock } from "../core/clock.ts";
import { leaseLostReason } from "../store/rules.ts";
import type { CompactionStore, LeaseRef } from "../store/store.ts";

export interface KeptLease {
  /** Aborts (reason: an Error naming why) when a refresh finds the lease gone or expired. */
  readonly lost: AbortSignal;
  /** Stops refreshing; resolves when the refresher has finished. */
  stop(): Promise<void>;
}

/** Refreshes the lease every third of its TTL until stopped or lost. */
export function keepLease(
  store: CompactionStore,
  ref: LeaseRef & { ttlMs: number; clock: Clock; onError?: (error: unknown) => void },
): KeptLease {
  const lost = new AbortController();
  const stopped = new AbortController();
  const loop = (async () => {
    while (!stopped.signal.aborted) {
      try {
        await ref.clock.sleep(ref.ttlMs / 3, stopped.signal);
      } catch {
        return;
      }
      const now = ref.clock.now();
      try {
        if (!(await store.refreshLease({ ...ref, now }))) {
          const why = leaseLostReason(await store.readLease(ref.sessionId), { ...ref, now }) ??
            "the lease could not be refreshed";
          lost.abort(new Error(`lease lost: ${why}`));
          return;
        }
      } catch (error) {
        // A busy store is transient; if it persists the lease expires and the commit refuses to write.
        ref.onError?.(error);
      }
    }
  })();
  return {
    lost: lost.signal,
    stop: () => {
      stopped.abort();
      return loop;
    },
  };
}
