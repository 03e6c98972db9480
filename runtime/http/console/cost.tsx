/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
/**
 * The cost page: what the model calls cost per day over a period, stacked by job or by one label's value,
 * with the period's totals: the `hermes cost` data, read through the same App operation (the store's
 * model-call rows by their time index; no transcript is read). The table is the data: cost_chart.js draws
 * the chart (uPlot) from it, so without script, or with a screen reader, the table says everything.
 */
import type { Context } from "hono";
import type { CostDimension, CostGroup } from "../../app/mod.ts";
import { LABEL_KEY } from "../../core/labels.ts";
import { roundUsd } from "../../core/usd.ts";
import { formatCount, shown } from "./format.ts";
import type { ConsoleEnv, ConsolePage, PageKit } from "./page.ts";

const DAY = 86_400_000;
const PERIODS = [7, 30, 90] as const;
/** Series beyond these (by cost) are summed as "other", so the chart stays readable. */
const MAX_SERIES = 8;
const OTHER = "(other)";
const NONE = "(none)";

class CostFilterError extends Error {}

interface CostView {
  days: number;
  by: CostDimension;
  labelKey: string;
  /** The UTC days of the period, oldest first (`YYYY-MM-DD`). */
  dayList: string[];
  series: string[];
  /** cost[day][series] in dollars. */
  cells: Map<string, Map<string, number>>;
  total: CostGroup | undefined;
}

function readQuery(c: Context<ConsoleEnv>): { days: number; by: CostDimension; labelKey: string } {
  const daysText = c.req.query("days")?.trim() || "30";
  const days = Number(daysText);
  if (!PERIODS.includes(days as typeof PERIODS[number])) {
    throw new CostFilterError(`days: "${daysText}" is not one of ${PERIODS.join(", ")}`);
  }
  const byText = c.req.query("by")?.trim() || "job";
  const labelKey = c.req.query("label")?.trim() ?? "";
  if (byText === "job") return { days, by: "job", labelKey };
  if (byText === "label") {
    if (!LABEL_KEY.test(labelKey)) {
      throw new CostFilterError(
        `label: "${labelKey}" is not a label key (letters, digits, "_", "." and "-", e.g. team)`,
      );
    }
    return { days, by: `label:${labelKey}`, labelKey };
  }
  throw new CostFilterError(`by: "${byText}" is not job or label`);
}

/** `YYYY-MM-DD` of a time (UTC), as the store names days. */
function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

async function load(kit: PageKit, query: { days: number; by: CostDimension; labelKey: string }) {
  const now = kit.clock.now();
  const since = Math.floor(now / DAY) * DAY - (query.days - 1) * DAY;
  const [groups, [total]] = await Promise.all([
    kit.app.cost({ since, until: now + 1, by: ["day", query.by] }),
    kit.app.cost({ since, until: now + 1, by: [] }),
  ]);
  const dayList: string[] = [];
  for (let at = since; at <= now; at += DAY) dayList.push(dayOf(at));
  const bySeries = new Map<string, number>();
  for (const g of groups) {
    const name = g.keys[1] ?? NONE;
    bySeries.set(name, (bySeries.get(name) ?? 0) + g.cost_usd);
  }
  const ranked = [...bySeries].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([n]) => n);
  const kept = new Set(ranked.length > MAX_SERIES ? ranked.slice(0, MAX_SERIES - 1) : ranked);
  const series = ranked.length > MAX_SERIES ? [...kept, OTHER] : ranked;
  const cells = new Map<string, Map<string, number>>(dayList.map((d) => [d, new Map()]));
  for (const g of groups) {
    const day = cells.get(g.keys[0] ?? "");
    if (!day) continue;
    const name = kept.has(g.keys[1] ?? NONE) ? g.keys[1] ?? NONE : OTHER;
    day.set(name, roundUsd((day.get(name) ?? 0) + g.cost_usd));
  }
  return { ...query, dayList, series, cells, total } satisfies CostView;
}

/** Dollars with cents, or four decimals under a dollar (the amounts of a day of small calls). */
function usd(amount: number): string {
  return `$${amount < 1 && amount > 0 ? amount.toFixed(4) : amount.toFixed(2)}`;
}

function CostTable(props: { view: CostView }) {
  const { view } = props;
  const sum = (values: number[]) => roundUsd(values.reduce((a, b) => a + b, 0));
  return (
    <table id="cost-table" class="cost" data-chart="cost-chart">
      <caption class="muted">
        Cost per day (UTC) by {view.by === "job" ? "job" : `label ${shown(view.labelKey)}`}, in US dollars
      </caption>
      <thead>
        <tr>
          <th scope="col">Day</th>
          {view.series.map((name) => (
            <th key={name} scope="col" class="num" data-series={name}>{shown(name)}</th>
          ))}
          <th scope="col" class="num">Total</th>
        </tr>
      </thead>
      <tbody>
        {view.dayList.map((day) => {
          const cells = view.cells.get(day)!;
          return (
            <tr data-day={day}>
              <th scope="row" class="mono">{day}</th>
              {view.series.map((name) => (
                <td class="num" data-value={String(cells.get(name) ?? 0)}>{usd(cells.get(name) ?? 0)}</td>
              ))}
              <td class="num">{usd(sum([...cells.values()]))}</td>
            </tr>
          );
        })}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row">Period</th>
          {view.series.map((name) => (
            <td class="num">{usd(sum(view.dayList.map((d) => view.cells.get(d)!.get(name) ?? 0)))}</td>
          ))}
          <td class="num">{usd(view.total?.cost_usd ?? 0)}</td>
        </tr>
      </tfoot>
    </table>
  );
}

function Totals(props: { total: CostGroup | undefined; days: number }) {
  const t = props.total;
  return (
    <dl class="facts totals" aria-label="Totals for the period">
      <dt>Cost, last {props.days} days</dt>
      <dd>
        <strong>{usd(t?.cost_usd ?? 0)}</strong>
      </dd>
      <dt>Model calls</dt>
      <dd>
        {formatCount(t?.calls ?? 0)}
        {t?.unpriced_calls
          ? (
            <span class="muted">
              {` (${formatCount(t.unpriced_calls)} without a known price, counted as $0)`}
            </span>
          )
          : null}
      </dd>
      <dt>Sessions</dt>
      <dd>{formatCount(t?.sessions ?? 0)}</dd>
      <dt>Tokens in / cached / out</dt>
      <dd>
        {formatCount(t?.input_tokens ?? 0)} / {formatCount(t?.cached_tokens ?? 0)} /{" "}
        {formatCount(t?.output_tokens ?? 0)}
      </dd>
    </dl>
  );
}

export const costPage: ConsolePage = {
  nav: { label: "Cost", href: "/cost" },
  register(router, kit) {
    router.get("/cost", kit.signedIn("runs:read"), async (c) => {
      let query;
      let error: string | undefined;
      try {
        query = readQuery(c);
      } catch (e) {
        if (!(e instanceof CostFilterError)) throw e;
        error = e.message;
        query = { days: 30, by: "job" as const, labelKey: "" };
      }
      const view = await load(kit, query);
      const empty = view.series.length === 0;
      return kit.page(
        c,
        "Cost",
        <>
          <h1>Cost</h1>
          <form class="filters" method="get" action="/cost" role="search">
            <label>
              Period
              <select name="days">
                {PERIODS.map((d) => (
                  <option value={String(d)} selected={view.days === d}>last {d} days</option>
                ))}
              </select>
            </label>
            <label>
              Stacked by
              <select name="by">
                <option value="job" selected={view.by === "job"}>job</option>
                <option value="label" selected={view.by !== "job"}>label</option>
              </select>
            </label>
            <label>
              Label key
              <input name="label" value={view.labelKey} placeholder="e.g. team" />
            </label>
            <button type="submit">Show</button>
          </form>
          {error ? <div class="notice error" role="alert">{error}</div> : null}
          <Totals total={view.total} days={view.days} />
          <h2>Per day</h2>
          {empty ? <p class="muted">No model call was recorded in this period.</p> : (
            <>
              {/* Drawn by cost_chart.js from the table below; hidden from screen readers, which read the table. */}
              <div id="cost-chart" class="chart" aria-hidden="true"></div>
              <CostTable view={view} />
              <script src="/assets/uplot.min.js" defer></script>
              <script src="/assets/cost_chart.js" defer></script>
            </>
          )}
        </>,
        error ? 400 : 200,
      );
    });
  },
};
