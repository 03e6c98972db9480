/**
 * Statistics and process helpers for bench scripts. Every ratio is measured interleaved with its baseline
 * (A B A B … in one run), so drift in machine load hits both sides alike; figures print as median (min–max).
 */
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

/** `12.30 ms (11.02 ms–15.71 ms)`: the median and the range of the samples. */
export function spread(samples: number[], format: (n: number) => string = fmt): string {
  return `${format(median(samples))} (${format(Math.min(...samples))}–${format(Math.max(...samples))})`;
}

/**
 * `2.10× (1.84–2.63)`: the ratio of the medians, and the range of the per-round ratios (sample i of
 * `measured` over sample i of `baseline`, which were taken next to each other).
 */
export function ratio(measured: number[], baseline: number[]): string {
  const rounds = Array.from(
    { length: Math.min(measured.length, baseline.length) },
    (_, i) => measured[i]! / baseline[i]!,
  );
  const x = (n: number) => `${n.toFixed(2)}×`;
  return `${x(median(measured) / median(baseline))} (${x(Math.min(...rounds))}–${x(Math.max(...rounds))})`;
}

export function report(name: string, value: string, target?: string): void {
  console.log(`${name.padEnd(58)} ${value.padStart(28)}${target ? `   (target ${target})` : ""}`);
}

/**
 * Runs every case once per round, in order, for `rounds` rounds after `warmup` unrecorded rounds;
 * resolves with each case's samples (ms), sample i of every case coming from round i.
 */
export async function interleave<K extends string>(
  cases: Record<K, () => Promise<number>>,
  options: { rounds: number; warmup?: number },
): Promise<Record<K, number[]>> {
  const names = Object.keys(cases) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let round = -(options.warmup ?? 1); round < options.rounds; round++) {
    for (const name of names) {
      const ms = await cases[name]();
      if (round >= 0) samples[name].push(ms);
    }
  }
  return samples;
}

/** Spawn → exit of `deno ARGS…` in ms; throws with its stderr when it fails. */
export async function timeProcess(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<number> {
  const started = performance.now();
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    ...options,
  }).output();
  const elapsed = performance.now() - started;
  if (code !== 0) {
    throw new Error(`deno ${args.join(" ")} exited ${code}: ${new TextDecoder().decode(stderr)}`);
  }
  return elapsed;
}

/** A bare `deno run` hello-world: the baseline of every start-up ratio. Resolves with its path. */
export async function writeHelloWorld(dir: string): Promise<string> {
  const path = `${dir}/hello.ts`;
  await Deno.writeTextFile(path, 'console.log("hello");\n');
  return path;
}
