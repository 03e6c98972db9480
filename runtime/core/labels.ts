/** Session labels: key → value pairs a run carries (`labels:`, `--label K=V`, the CI's), for attributing cost. */

/** Label keys: what `labels:`, `--label` and `--by label:KEY` accept (and what is safe in a JSON path). */
export const LABEL_KEY = /^[A-Za-z0-9_][A-Za-z0-9_.\-]*$/;

/** Key → value. */
export type Labels = Record<string, string>;
