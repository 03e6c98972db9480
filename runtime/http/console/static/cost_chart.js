// The cost page's chart (served from /assets/, never inline): reads the cost table the server rendered (one
// row per day, one column per job or label value) and draws it as stacked bars with uPlot. The table stays
// the data for keyboards and screen readers; the chart is hidden from them.
"use strict";
(() => {
  const table = document.querySelector("table[data-chart]");
  const target = table && document.getElementById(table.dataset.chart);
  if (!table || !target || typeof uPlot === "undefined") return;
  const names = [...table.querySelectorAll("thead th[data-series]")].map((th) => th.dataset.series);
  const rows = [...table.querySelectorAll("tbody tr[data-day]")];
  const xs = rows.map((row) => Date.parse(`${row.dataset.day}T00:00:00Z`) / 1000);
  const values = names.map((_, i) =>
    rows.map((row) => Number(row.querySelectorAll("td[data-value]")[i]?.dataset.value ?? 0))
  );
  // Stacked: series i is drawn at the sum of series 0..i, the tallest first so each shorter bar lies over it.
  const stacked = values.map((_, i) =>
    xs.map((_, d) => values.slice(0, i + 1).reduce((sum, s) => sum + s[d], 0))
  );
  const palette = ["#0969da", "#1a7f37", "#bf8700", "#cf222e", "#8250df", "#1b7c83", "#bc4c00", "#6e7781"];
  const order = names.map((_, i) => i).reverse();
  const bars = uPlot.paths.bars({ size: [0.7, 64] });
  const money = (v) => (v == null ? "—" : `$${v < 1 && v > 0 ? v.toFixed(4) : v.toFixed(2)}`);
  const half = 43_200; // half a day (s): room for the first and last bars
  const day = (t) => new Date(t * 1000).toISOString().slice(5, 10);
  // At most 15 day labels on the axis.
  const every = Math.ceil(xs.length / 15);
  const chart = new uPlot(
    {
      width: Math.max(320, target.clientWidth),
      height: 280,
      scales: {
        x: { time: false, range: () => [xs[0] - half, xs[xs.length - 1] + half] },
        // Money starts at nothing: a bar's height is its amount.
        y: { range: (_, __, max) => [0, max > 0 ? max * 1.1 : 1] },
      },
      axes: [
        { splits: () => xs.filter((_, i) => i % every === 0), values: (_, ticks) => ticks.map(day) },
        { values: (_, ticks) => ticks.map(money), size: 70 },
      ],
      series: [
        { label: "Day", value: (_, v) => (v == null ? "—" : day(v)) },
        ...order.map((i) => ({
          label: names[i],
          stroke: palette[i % palette.length],
          fill: palette[i % palette.length],
          paths: bars,
          points: { show: false },
          // The legend shows the day's own amount, not the stacked height.
          value: (_, __, ___, idx) => (idx == null ? "—" : money(values[i][idx])),
        })),
      ],
    },
    [xs, ...order.map((i) => stacked[i])],
    target,
  );
  target.dataset.drawn = String(chart.series.length - 1);
})();
