/**
 * The event streams open in one server, per token: the per-token cap counts them, and a stopping server
 * waits (briefly) for them to send their last event before it closes connections.
 */
export class OpenStreams {
  readonly #byToken = new Map<string, number>();
  #total = 0;
  #idle: (() => void)[] = [];

  count(token: string): number {
    return this.#byToken.get(token) ?? 0;
  }

  open(token: string): void {
    this.#byToken.set(token, this.count(token) + 1);
    this.#total++;
  }

  close(token: string): void {
    const left = this.count(token) - 1;
    if (left <= 0) this.#byToken.delete(token);
    else this.#byToken.set(token, left);
    if (--this.#total === 0) { for (const wake of this.#idle.splice(0)) wake(); }
  }

  /** Resolves once no stream is open, or after `ms`. */
  idle(ms: number): Promise<void> {
    if (this.#total === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
