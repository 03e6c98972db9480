/**
 * In-process wake-ups by key: a waiter takes a signal for a key before it looks at the store, and the next
 * `notify(key)` aborts it, so news that comes between its look and its sleep is not lost. For parts of one
 * process that would otherwise only poll the store for each other's writes (a server's event streams and its
 * own queue worker); the poll stays for writes of other processes.
 */
/** A key notified with every run's news as well as the run's own id (for watchers of all runs). */
export const ANY_RUN = "*";

export class Wakeups {
  #waiting = new Map<string, Set<AbortController>>();

  /** A signal the next `notify(key)` aborts; `release` it once done waiting. */
  watch(key: string): { signal: AbortSignal; release(): void } {
    const controller = new AbortController();
    let set = this.#waiting.get(key);
    if (!set) this.#waiting.set(key, set = new Set());
    set.add(controller);
    return {
      signal: controller.signal,
      release: () => {
        const current = this.#waiting.get(key);
        current?.delete(controller);
        if (current?.size === 0) this.#waiting.delete(key);
      },
    };
  }

  /** Wakes everyone watching `key` now. */
  notify(key: string): void {
    const set = this.#waiting.get(key);
    if (!set) return;
    this.#waiting.delete(key);
    for (const controller of set) controller.abort();
  }

  /** Keys watched now (for tests and metrics). */
  get size(): number {
    return this.#waiting.size;
  }
}
