/** "Did you mean": the candidate nearest to a mistyped word by edit distance, if any is near enough. */

/** The closest candidate (case-insensitive), or undefined when every one is more than ~a third off. */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const candidate of candidates) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) (best = candidate, bestDistance = d);
  }
  return best;
}

/** ` (did you mean "x"?)` or "" — the suffix every unknown-name message uses. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const suggestion = nearest(word, candidates);
  return suggestion === undefined ? "" : ` (did you mean "${suggestion}"?)`;
}

/** Levenshtein distance, one row at a time. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}
