/** Amounts of US dollars, as costs are counted and shown. */

/** A sum of dollars without the float noise of adding many small prices (to a billionth of a dollar). */
export function roundUsd(amount: number): number {
  return Math.round(amount * 1e9) / 1e9;
}

/** Dollars as a person reads them: cents, or two significant digits for the small amounts of one call. */
export function formatUsd(amount: number): string {
  return `$${
    amount >= 0.1 || amount === 0 ? amount.toFixed(2) : amount.toPrecision(2).replace(/(\.\d*?)0+$/, "$1")
  }`;
}
