/**
 * The cost cap of one model call (`limits.max_cost_usd`, `--max-budget-usd`): refused before it is sent when
 * its estimated input would pass the cap, stopped between streamed chunks once its input plus the output so
 * far (about four characters a token) would.
 */
import type { Budget } from "./limits.ts";
import type { Price } from "../providers/pricing.ts";

export class SpendCap {
  readonly inputTokens: number;
  #budget: Budget;
  #price: Price | null;
  #inputUsd: number;
  #chars = 0;
  #controller = new AbortController();

  /** Throws the LimitError when the call's input alone would pass the cap. */
  constructor(budget: Budget, price: Price | null | undefined, inputTokens: number) {
    this.#budget = budget;
    this.#price = budget.maxCostUsd !== undefined && price ? price : null;
    this.inputTokens = inputTokens;
    this.#inputUsd = this.#price ? (inputTokens * this.#price.input) / 1_000_000 : 0;
    const before = this.#price ? budget.costLimit(this.#inputUsd, "before") : undefined;
    if (before) throw before;
  }

  get capped(): boolean {
    return this.#price !== null;
  }

  get outputTokens(): number {
    return Math.ceil(this.#chars / 4);
  }

  /** Estimated USD of the call so far: its input and the output streamed. */
  estimate(): number {
    return this.#inputUsd + (this.#price ? (this.outputTokens * this.#price.output) / 1_000_000 : 0);
  }

  /** The call's signal: `outer`, and this cap once the reply passes it. */
  signal(outer: AbortSignal): AbortSignal {
    return this.#price ? AbortSignal.any([outer, this.#controller.signal]) : outer;
  }

  /** Counts streamed characters; aborts the call once the estimate passes the cap. */
  readonly onOutput = (chars: number): void => {
    this.#chars += chars;
    if (this.#controller.signal.aborted) return;
    const over = this.#budget.costLimit(this.estimate(), "during");
    if (over) this.#controller.abort(over);
  };

  /** A provider that does not stream hands the whole reply over at once: over the cap is still over. */
  check(): void {
    if (this.#controller.signal.aborted) throw this.#controller.signal.reason;
  }

  /** Whether `error` is this cap stopping the reply. */
  stopped(error: unknown): boolean {
    return this.#controller.signal.aborted && error === this.#controller.signal.reason;
  }
}
