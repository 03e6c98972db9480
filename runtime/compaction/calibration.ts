/**
 * The calibration ratio of each session (estimate.ts): measured by a pass from the newest usable reading,
 * kept in session state so other processes and later runs start from it, and cached here — advisory, a stale
 * copy only scales the cheap estimate of what was appended since the last reading.
 */
import { errorMessage } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { SessionStore } from "../store/store.ts";
import { CALIBRATION_KEY, calibrationFrom, estimateFromInput } from "./estimate.ts";
import { storedRatio } from "./occupancy.ts";
import type { PlanRow } from "./rows.ts";

export class Calibration {
  #store: SessionStore;
  #log: Logger;
  #ratios = new Map<string, number>();

  /** `created`: a session created just now, whose ratio is 1 until a pass measures one (nothing to read). */
  constructor(store: SessionStore, log: Logger, created?: string) {
    this.#store = store;
    this.#log = log;
    if (created !== undefined) this.#ratios.set(created, 1);
  }

  async ratioOf(sessionId: string): Promise<number> {
    let ratio = this.#ratios.get(sessionId);
    if (ratio === undefined) {
      ratio = await storedRatio(this.#store, sessionId);
      this.#ratios.set(sessionId, ratio);
    }
    return ratio;
  }

  /** The estimate of the next request, read cheaply (the newest reading and what was stored after it). */
  async estimate(sessionId: string): Promise<number> {
    return estimateFromInput(await this.#store.estimateInput(sessionId), await this.ratioOf(sessionId));
  }

  /** The ratio of a pass over `rows`: the newest usable reading's, else the last one known (then stored). */
  async calibrate(sessionId: string, rows: readonly PlanRow[]): Promise<number> {
    const known = await this.ratioOf(sessionId);
    const measured = calibrationFrom(rows);
    if (measured === null || measured === known) return known;
    this.#ratios.set(sessionId, measured);
    try {
      await this.#store.setState(sessionId, CALIBRATION_KEY, { ratio: measured });
    } catch (error) {
      this.#log.warn(`session ${sessionId}: could not store the token calibration: ${errorMessage(error)}`);
    }
    return measured;
  }
}
