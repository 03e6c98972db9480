/**
 * The database's clock, read locally: this host's clock plus its offset from the server's `clock_timestamp()`,
 * measured at open (half a round trip of error) and again, in the background, once it is a minute old. Every
 * host on one store then stamps rows, expires leases and judges claims on one time line, however wrong its
 * own clock is.
 */
import { type Clock, systemClock } from "../../core/clock.ts";
import type { Sql } from "./_db.ts";

const RESYNC_MS = 60_000;

export class ServerClock implements Clock {
  #sql: Sql;
  #offset = 0;
  #syncedAt = -Infinity;
  #pending: Promise<void> | undefined;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  /** Measures the offset; rejects when the server cannot be reached. */
  async sync(): Promise<void> {
    const sent = Date.now();
    const [row] = await this.#sql`SELECT extract(epoch FROM clock_timestamp()) * 1000 AS ms`;
    const received = Date.now();
    this.#offset = Number(row!.ms) - (sent + received) / 2;
    this.#syncedAt = performance.now();
  }

  now(): number {
    if (performance.now() - this.#syncedAt > RESYNC_MS && !this.#pending) {
      // A failed resync keeps the last offset and is tried again a minute later.
      this.#syncedAt = performance.now();
      this.#pending = this.sync().catch(() => {}).finally(() => this.#pending = undefined);
    }
    return Math.round(Date.now() + this.#offset);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return systemClock.sleep(ms, signal);
  }

  /** Waits for a resync in flight, so the pool can be closed under it. */
  async settle(): Promise<void> {
    await this.#pending;
  }
}
