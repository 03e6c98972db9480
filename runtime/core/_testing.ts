/** Test support for core seams: a clock that moves only when told to. */
import type { Clock } from "./clock.ts";

/** A manually advanced clock for tests: `sleep` resolves when `advance` passes its deadline. */
export class ManualClock implements Clock {
  #now: number;
  #sleepers: { at: number; resolve: () => void }[] = [];
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }
  now(): number {
    return this.#now;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const sleeper = { at: this.#now + ms, resolve };
      this.#sleepers.push(sleeper);
      signal?.addEventListener("abort", () => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        reject(signal.reason);
      }, { once: true });
    });
  }
  /** Moves time forward and wakes every sleeper whose deadline has passed. */
  async advance(ms: number): Promise<void> {
    this.#now += ms;
    const due = this.#sleepers.filter((s) => s.at <= this.#now);
    this.#sleepers = this.#sleepers.filter((s) => s.at > this.#now);
    for (const s of due) s.resolve();
    await Promise.resolve();
  }
}
