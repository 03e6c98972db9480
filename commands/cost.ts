/**
 * `hermes cost [--since D] [--until D] [--by job|model|day|label:KEY]... [--json|--csv]`: what the model calls
 * the store recorded cost and used, in a time range, grouped as asked (the store reads its model-call rows by
 * their time index; no transcript is read).
 */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { parseDuration } from "../runtime/core/duration.ts";
import { formatUsd, roundUsd } from "../runtime/core/usd.ts";
import { LABEL_KEY } from "../runtime/core/labels.ts";
import { visibleText } from "../runtime/core/visible.ts";
import type { CostDimension, CostGroup } from "../runtime/store/store.ts";

const COMMAND = "cost";
const DAY = 86_400_000;
const TOKENS = [
  "input_tokens",
  "cached_tokens",
  "cache_write_tokens",
  "output_tokens",
  "reasoning_tokens",
] as const;

/** What `--json` prints. */
export interface CostReport {
  since: string | null;
  until: string | null;
  by: CostDimension[];
  groups: (Record<string, unknown> & Omit<CostGroup, "keys">)[];
  total: Omit<CostGroup, "keys">;
}

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs(COMMAND, cli.args);
  if (positionals.length > 0) {
    throw new ValidationError(`hermes cost: unexpected argument "${positionals[0]}"`);
  }
  if (values.json && values.csv) {
    throw new ValidationError("hermes cost: --json and --csv exclude each other");
  }
  const now = cli.clock.now();
  const since = values.since === undefined ? undefined : parseWhen("--since", values.since, now, false);
  const until = values.until === undefined ? undefined : parseWhen("--until", values.until, now, true);
  if (since !== undefined && until !== undefined && since >= until) {
    throw new ValidationError(
      `hermes cost: --since ${values.since} is not before --until ${values.until}: the range is empty`,
    );
  }
  const by = (values.by ?? []).map(parseDimension);
  const range = { ...(since === undefined ? {} : { since }), ...(until === undefined ? {} : { until }) };
  const store = await cli.openStore();
  let groups: CostGroup[];
  let total: CostGroup;
  try {
    groups = await store.costReport({ ...range, by });
    total = by.length === 0
      ? groups[0] ?? empty()
      : partitioned(by)
      ? groups.reduce(add, empty())
      : (await store.costReport({ ...range, by: [] }))[0] ?? empty();
  } finally {
    await store.close();
  }
  if (values.csv) await cli.out(csv(by, groups));
  else if (values.json) {
    const report: CostReport = {
      since: since === undefined ? null : new Date(since).toISOString(),
      until: until === undefined ? null : new Date(until).toISOString(),
      by,
      groups: by.length === 0 ? [] : groups.map((g) => ({ ...named(by, g.keys), ...counts(g) })),
      total: counts(total),
    };
    await cli.out(JSON.stringify(report) + "\n");
  } else await cli.out(table(by, groups, total));
  return 0;
}

function empty(): CostGroup {
  return {
    keys: [],
    calls: 0,
    sessions: 0,
    input_tokens: 0,
    cached_tokens: 0,
    cache_write_tokens: 0,
    output_tokens: 0,
    reasoning_tokens: 0,
    cost_usd: 0,
    unpriced_calls: 0,
  };
}

/**
 * Whether each session falls in one group only: a call carries its root session's job and labels, which never
 * change, so grouped by those alone the groups' sessions add up to the total (by model or day they need not).
 */
function partitioned(by: readonly CostDimension[]): boolean {
  return by.every((dimension) => dimension === "job" || dimension.startsWith("label:"));
}

function add(total: CostGroup, group: CostGroup): CostGroup {
  return {
    keys: [],
    calls: total.calls + group.calls,
    sessions: total.sessions + group.sessions,
    input_tokens: total.input_tokens + group.input_tokens,
    cached_tokens: total.cached_tokens + group.cached_tokens,
    cache_write_tokens: total.cache_write_tokens + group.cache_write_tokens,
    output_tokens: total.output_tokens + group.output_tokens,
    reasoning_tokens: total.reasoning_tokens + group.reasoning_tokens,
    cost_usd: roundUsd(total.cost_usd + group.cost_usd),
    unpriced_calls: total.unpriced_calls + group.unpriced_calls,
  };
}

function counts({ keys: _, ...rest }: CostGroup): Omit<CostGroup, "keys"> {
  return rest;
}

/** A group's keys as fields: `job`, `model`, `day`, and `labels: {KEY: value}` for the label groupings. */
function named(by: readonly CostDimension[], keys: readonly (string | null)[]): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  const labels: Record<string, string | null> = {};
  by.forEach((dimension, i) => {
    if (dimension.startsWith("label:")) labels[dimension.slice("label:".length)] = keys[i]!;
    else fields[dimension] = keys[i];
  });
  return Object.keys(labels).length ? { ...fields, labels } : fields;
}

/** `--since` / `--until`: an ISO date or time, or an age before now (7d, 12h, 90m). Epoch ms. */
export function parseWhen(flag: string, text: string, now: number, endOfDay: boolean): number {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const at = Date.parse(`${text}T00:00:00Z`);
    if (!Number.isNaN(at)) return endOfDay ? at + DAY : at;
  } else if (/^\d{4}-\d{2}-\d{2}[T ]/.test(text)) {
    const at = Date.parse(text.replace(" ", "T"));
    if (!Number.isNaN(at)) return at;
  } else if (/^\d+(\.\d+)?[a-z]/i.test(text)) {
    try {
      return now - parseDuration(text);
    } catch { /* named below */ }
  }
  throw new ValidationError(
    `hermes cost: invalid ${flag} "${text}": expected a date (2026-01-31), a time (2026-01-31T09:00:00Z) ` +
      "or an age (7d, 12h)",
  );
}

function parseDimension(text: string): CostDimension {
  if (text === "job" || text === "model" || text === "day") return text;
  if (text.startsWith("label:")) {
    const key = text.slice("label:".length);
    if (LABEL_KEY.test(key)) return `label:${key}`;
    throw new ValidationError(
      `hermes cost: invalid --by "${text}": a label key is letters, digits, "_", "." and "-" (e.g. label:ci.repository)`,
    );
  }
  throw new ValidationError(`hermes cost: invalid --by "${text}": expected job, model, day or label:KEY`);
}

function csv(by: readonly CostDimension[], groups: readonly CostGroup[]): string {
  const cell = (value: string | number | null) => {
    const text = value === null ? "" : String(value);
    return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  const header = [...by, "calls", "sessions", ...TOKENS, "cost_usd", "unpriced_calls"];
  const rows = groups.map((g) => [
    ...g.keys,
    g.calls,
    g.sessions,
    ...TOKENS.map((t) => g[t]),
    g.cost_usd,
    g.unpriced_calls,
  ]);
  return [header, ...rows].map((row) => row.map(cell).join(",")).join("\n") + "\n";
}

function table(by: readonly CostDimension[], groups: readonly CostGroup[], total: CostGroup): string {
  if (total.calls === 0) return "No model calls in this range.\n";
  const header = [
    ...by.map((d) => d.toUpperCase()),
    "CALLS",
    "SESSIONS",
    "INPUT",
    "CACHED",
    "OUTPUT",
    "REASONING",
    "COST",
  ];
  const line = (keys: string[], g: CostGroup) => [
    ...keys,
    String(g.calls),
    String(g.sessions),
    String(g.input_tokens),
    String(g.cached_tokens),
    String(g.output_tokens),
    String(g.reasoning_tokens),
    formatUsd(g.cost_usd) + (g.unpriced_calls ? ` + ${g.unpriced_calls} unpriced` : ""),
  ];
  const rows = by.length === 0 ? [line([], total)] : [
    ...groups.map((g) => line(g.keys.map((k) => k ?? "-"), g)),
    line(by.map((_, i) => i === 0 ? "TOTAL" : ""), total),
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const numeric = (i: number) => i >= by.length;
  const format = (cells: string[]) =>
    cells.map((c, i) => numeric(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)).join("  ").trimEnd();
  return visibleText([format(header), ...rows.map(format)].join("\n") + "\n");
}
