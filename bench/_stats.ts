/** Small statistics helpers for bench scripts: medians and percentiles of samples in ms. */
export function median(samples: number[]): number {
  return percentile(samples, 50);
}

export function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function fmt(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`;
}

export function report(name: string, value: string, target?: string): void {
  console.log(`${name.padEnd(58)} ${value.padStart(14)}${target ? `   (target ${target})` : ""}`);
}
