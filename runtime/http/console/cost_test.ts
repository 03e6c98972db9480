/**
 * The cost page over HTTP with a real SQLite store holding model calls: spend per UTC day stacked by job or by
 * a label's value, as the table the chart is drawn from (every day of the period, a column per series, the
 * period's sums), the totals (`hermes cost`'s numbers), calls outside the period left out, bad filters named.
 */
import assert from "node:assert/strict";
import type { ModelCallRow } from "../../store/store.ts";
import { consoleFixture, NOW, textOf } from "./_testing.ts";

const DAY = 86_400_000;

function call(
  job: string,
  at: number,
  cost: number | null,
  labels: Record<string, string> = {},
): ModelCallRow {
  return {
    session_id: `ses_${job}_${at}`,
    caller_id: `ses_${job}_${at}`,
    job,
    labels,
    at,
    provider: "openai",
    model: "m",
    prompt_tokens: 100,
    cached_tokens: 10,
    cache_write_tokens: 0,
    completion_tokens: 20,
    reasoning_tokens: 0,
    cost_usd: cost,
  };
}

/** The table's rows as [day, ...cells]. */
function rows(html: string): string[][] {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html)![1]!;
  return [...body.matchAll(/<tr data-day="([^"]+)">([\s\S]*?)<\/tr>/g)].map((m) => [
    m[1]!,
    ...[...m[2]!.matchAll(/<td class="num"[^>]*>([^<]*)<\/td>/g)].map((c) => c[1]!),
  ]);
}

Deno.test("console cost: per day stacked by job, the table the chart reads, the period's totals", async () => {
  await using fx = await consoleFixture();
  await fx.store.importModelCalls([
    call("triage", NOW - 1000, 0.5, { team: "a" }),
    call("triage", NOW - DAY, 0.25, { team: "a" }),
    call("report", NOW - DAY - 5000, 2, { team: "b" }),
    call("report", NOW - 2 * DAY, null),
    call("old", NOW - 40 * DAY, 9),
  ]);
  const { cookie } = await fx.session("runs:read");
  const page = await fx.fetchPage("/cost?days=7", { cookie });
  assert.equal(page.response.status, 200);
  const text = textOf(page.text);
  assert.match(text, /Cost, last 7 days \$2\.75/);
  assert.match(text, /Model calls 4 \(1 without a known price, counted as \$0\)/);
  assert.match(text, /Sessions 4/);
  assert.match(text, /Tokens in \/ cached \/ out 400 \/ 40 \/ 80/);
  // Series by cost, most first; each day of the period, oldest first.
  assert.match(
    page.text,
    /<th scope="col" class="num" data-series="report">report<\/th><th[^>]*data-series="triage"/,
  );
  const table = rows(page.text);
  assert.equal(table.length, 7);
  assert.deepEqual(
    table.map((r) => r[0]),
    [1, 2, 3, 4, 5, 6, 7].map((i) => new Date(NOW - (7 - i) * DAY).toISOString().slice(0, 10)),
  );
  assert.deepEqual(table.at(-1), ["2026-12-07", "$0.00", "$0.5000", "$0.5000"]);
  assert.deepEqual(table.at(-2), ["2026-12-06", "$2.00", "$0.2500", "$2.25"]);
  assert.deepEqual(
    table.at(-3),
    ["2026-12-05", "$0.00", "$0.00", "$0.00"],
    "an unpriced call costs nothing known",
  );
  assert.match(textOf(/<tfoot>([\s\S]*?)<\/tfoot>/.exec(page.text)![1]!), /Period \$2\.00 \$0\.7500 \$2\.75/);
  assert.match(page.text, /<td class="num" data-value="0.25">/, "the chart's numbers ride on the cells");
  // The chart's scripts are files (the CSP allows no inline script); nothing else is a script.
  assert.match(page.text, /<script src="\/assets\/uplot\.min\.js" defer=""><\/script>/);
  assert.match(page.text, /<script src="\/assets\/cost_chart\.js" defer=""><\/script>/);
  assert.doesNotMatch(page.text, /<script>|<style>| style=| on[a-z]+=/i);
  const script = await fx.fetchPage("/assets/cost_chart.js");
  assert.equal(script.response.status, 200);
  assert.match(script.text, /uPlot/);

  const longer = textOf((await fx.fetchPage("/cost?days=90", { cookie })).text);
  assert.match(longer, /Cost, last 90 days \$11\.75/, "the older call is in a longer period");
});

Deno.test("console cost: stacked by a label's value; bad filters are named with 400", async () => {
  await using fx = await consoleFixture();
  await fx.store.importModelCalls([
    call("triage", NOW - 1000, 0.5, { team: "a" }),
    call("report", NOW - 2000, 2, { team: "b" }),
    call("other", NOW - 3000, 1),
  ]);
  const { cookie } = await fx.session("runs:read");
  const page = await fx.fetchPage("/cost?days=7&by=label&label=team", { cookie });
  assert.equal(page.response.status, 200);
  assert.match(textOf(page.text), /Cost per day \(UTC\) by label team/);
  assert.deepEqual(rows(page.text).at(-1), ["2026-12-07", "$2.00", "$1.00", "$0.5000", "$3.50"]);
  assert.match(
    page.text,
    /data-series="b">b<\/th><th[^>]*data-series="\(none\)">\(none\)<\/th><th[^>]*data-series="a"/,
  );

  for (
    const [query, message] of [
      ["days=3", /days: "3" is not one of 7, 30, 90/],
      ["by=model", /by: "model" is not job or label/],
      ["by=label&label=a%20b", /label: "a b" is not a label key/],
    ] as const
  ) {
    const bad = await fx.fetchPage(`/cost?${query}`, { cookie });
    assert.equal(bad.response.status, 400, query);
    assert.match(textOf(bad.text), message);
  }
});
