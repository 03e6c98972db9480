/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
/**
 * The runs list: newest first, filtered by status, job, label and time, paged on the server by keyset (the
 * last row's submission time and id: every page costs what the first does, however many runs are stored).
 * The first page's rows are live: the server streams them again whenever a run changed (live.ts), so a run
 * appears and its status changes without a reload.
 */
import type { Context } from "hono";
import { hasEnded, type ListRunsOptions, type QueuedRun } from "../../app/mod.ts";
import { formatCost, formatCount, formatDuration, formatTime, shown } from "./format.ts";
import { Status } from "./layout.tsx";
import type { ConsoleEnv, ConsolePage } from "./page.ts";
import { ANY_RUN } from "./live.ts";
import { RUN_STATUSES } from "../schemas.ts";

export const PAGE_SIZE = 50;

/** Time windows of the filter, by their query value. */
const WINDOWS: Record<string, { label: string; ms: number }> = {
  "1h": { label: "last hour", ms: 3600_000 },
  "24h": { label: "last 24 hours", ms: 86_400_000 },
  "7d": { label: "last 7 days", ms: 7 * 86_400_000 },
  "30d": { label: "last 30 days", ms: 30 * 86_400_000 },
};

export interface RunsFilter {
  status?: string;
  job?: string;
  /** `KEY=VALUE`. */
  label?: string;
  /** A key of WINDOWS. */
  since?: string;
  /** The keyset cursor: `SUBMITTED_AT.ID` of the last run of the previous page. */
  before?: string;
}

/** The filter a query names; an unknown value is a ValidationError-like message (400). */
export function readFilter(query: Record<string, string>): RunsFilter {
  const filter: RunsFilter = {};
  for (const name of ["status", "job", "label", "since", "before"] as const) {
    const value = query[name]?.trim();
    if (value) filter[name] = value;
  }
  return filter;
}

export function listOptions(filter: RunsFilter, now: number): ListRunsOptions {
  const options: ListRunsOptions = { limit: PAGE_SIZE + 1 };
  if (filter.status) options.status = filter.status;
  if (filter.job) options.job = filter.job;
  if (filter.label) {
    const at = filter.label.indexOf("=");
    if (at < 1) throw new FilterError(`label: "${filter.label}" is not KEY=VALUE`);
    options.labels = { [filter.label.slice(0, at)]: filter.label.slice(at + 1) };
  }
  if (filter.since) {
    const window = WINDOWS[filter.since];
    if (!window) {
      throw new FilterError(`since: "${filter.since}" is not one of ${Object.keys(WINDOWS).join(", ")}`);
    }
    options.since = now - window.ms;
  }
  if (filter.before) {
    const match = /^(\d{1,15})\.(.+)$/.exec(filter.before);
    if (!match) throw new FilterError(`before: "${filter.before}" is not a page cursor`);
    options.before = { submitted_at: Number(match[1]), id: match[2]! };
  }
  return options;
}

export class FilterError extends Error {}

function queryOf(filter: RunsFilter, extra: Partial<RunsFilter> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...filter, ...extra })) {
    if (value !== undefined && value !== "") params.set(name, value);
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** What a run's row shows of its result: tokens in and out, cost (with its subagents' when it had any). */
function spend(run: QueuedRun) {
  const result = run.result as
    | {
      usage?: { prompt_tokens?: number; completion_tokens?: number };
      cost_usd?: number | null;
      total?: { usage?: { prompt_tokens?: number; completion_tokens?: number }; cost_usd?: number | null };
    }
    | null;
  const usage = result?.total?.usage ?? result?.usage;
  const cost = result?.total ? result.total.cost_usd : result?.cost_usd;
  return {
    tokens: usage ? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0) : null,
    cost: cost ?? null,
  };
}

function duration(run: QueuedRun, now: number): number | null {
  if (run.started_at === null) return null;
  return (run.finished_at ?? (hasEnded(run) ? run.started_at : now)) - run.started_at;
}

function Rows(props: { runs: QueuedRun[]; now: number; query: string | undefined; pollMs: number }) {
  const query = props.query;
  return (
    <tbody
      id="runs-rows"
      data-live={query !== undefined ? `/runs/stream${query}` : undefined}
      data-fallback={query !== undefined ? `/runs/rows${query}` : undefined}
      data-poll-ms={query !== undefined ? String(props.pollMs) : undefined}
    >
      {props.runs.length === 0
        ? (
          <tr data-key="none">
            <td colspan={8} class="muted">No run matches.</td>
          </tr>
        )
        : props.runs.map((run) => {
          const { tokens, cost } = spend(run);
          const labels = Object.entries(run.labels).map(([k, v]) => `${k}=${v}`).join(" ");
          return (
            <tr data-run={run.id} data-key={`run:${run.id}`}>
              <td class="mono">
                <a href={`/runs/${encodeURIComponent(run.id)}`}>{run.id}</a>
              </td>
              <td>
                <Status status={run.status} />
              </td>
              <td>
                {shown(run.job)}
                {labels ? <div class="muted">{shown(labels)}</div> : null}
              </td>
              <td>{run.trigger}</td>
              <td class="mono">{formatTime(run.submitted_at)}</td>
              <td class="num">{formatDuration(duration(run, props.now))}</td>
              <td class="num">{formatCount(tokens)}</td>
              <td class="num">{formatCost(cost)}</td>
            </tr>
          );
        })}
    </tbody>
  );
}

async function load(c: Context<ConsoleEnv>, kit: Parameters<ConsolePage["register"]>[1]) {
  const filter = readFilter(c.req.query());
  const now = kit.clock.now();
  let options: ListRunsOptions;
  try {
    options = listOptions(filter, now);
  } catch (error) {
    if (error instanceof FilterError) return { filter, error: error.message, runs: [], more: false, now };
    throw error;
  }
  const rows = await kit.app.runs(options);
  return { filter, error: undefined, runs: rows.slice(0, PAGE_SIZE), more: rows.length > PAGE_SIZE, now };
}

export const runsPage: ConsolePage = {
  nav: { label: "Runs", href: "/runs" },
  register(router, kit) {
    router.get("/", (c) => c.redirect("/runs", 303));

    router.get("/runs", kit.signedIn("runs:read"), async (c) => {
      const { filter, error, runs, more, now } = await load(c, kit);
      // Only the first page is live: a later page is a fixed slice of history.
      const live = filter.before ? undefined : queryOf(filter);
      const last = runs.at(-1);
      return kit.page(
        c,
        "Runs",
        <>
          <h1>Runs</h1>
          <form class="filters" method="get" action="/runs" role="search">
            <label>
              Status
              <select name="status">
                <option value="">any</option>
                {RUN_STATUSES.map((s) => (
                  <option value={s} selected={filter.status === s}>{s.replace(/_/g, " ")}</option>
                ))}
              </select>
            </label>
            <label>
              Job
              <input name="job" value={filter.job ?? ""} placeholder="name" />
            </label>
            <label>
              Label
              <input name="label" value={filter.label ?? ""} placeholder="key=value" />
            </label>
            <label>
              Submitted
              <select name="since">
                <option value="">any time</option>
                {Object.entries(WINDOWS).map(([value, w]) => (
                  <option value={value} selected={filter.since === value}>{w.label}</option>
                ))}
              </select>
            </label>
            <button type="submit">Filter</button>
            <a href="/runs">Clear</a>
          </form>
          {error ? <div class="notice error" role="alert">{error}</div> : null}
          <table aria-describedby="runs-caption">
            <caption id="runs-caption" class="muted">
              {live ? "Newest first; this page updates itself." : "Newest first."}
            </caption>
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Status</th>
                <th scope="col">Job</th>
                <th scope="col">Trigger</th>
                <th scope="col">Submitted (UTC)</th>
                <th scope="col" class="num">Duration</th>
                <th scope="col" class="num">Tokens</th>
                <th scope="col" class="num">Cost</th>
              </tr>
            </thead>
            <Rows runs={runs} now={now} query={live} pollMs={kit.pollMs} />
          </table>
          <nav class="pager" aria-label="Pages of runs">
            {filter.before ? <a href={`/runs${queryOf(filter, { before: "" })}`}>← Newest</a> : null}
            {more && last
              ? (
                <a href={`/runs${queryOf(filter, { before: `${last.submitted_at}.${last.id}` })}`} rel="next">
                  Older →
                </a>
              )
              : null}
          </nav>
        </>,
        error ? 400 : 200,
      );
    });

    // The first page's rows as HTML: the live stream's part, and what a browser whose stream failed polls.
    const rows = async (c: Context<ConsoleEnv>) => {
      const { filter, runs, now } = await load(c, kit);
      const live = filter.before ? undefined : queryOf(filter);
      return String(<Rows runs={runs} now={now} query={live} pollMs={kit.pollMs} />);
    };

    router.get("/runs/rows", kit.signedIn("runs:read"), async (c) => c.html(await rows(c)));

    router.get(
      "/runs/stream",
      kit.signedIn("runs:read"),
      (c) => kit.live(c, { key: ANY_RUN, render: async () => ({ html: await rows(c), ended: false }) }),
    );
  },
};
