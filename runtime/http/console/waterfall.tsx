/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
/**
 * A run's timing waterfall: one bar per model call (turn.start → turn.end) and per tool call (tool.call →
 * tool.result), placed by the events' times, drawn as inline SVG (attributes, not styles: the CSP allows no
 * inline style) and repeated as a table for a screen reader or a reader without the picture.
 */
import type { RunEventRow } from "../../app/mod.ts";
import { formatDuration, shown } from "./format.ts";

export interface Span {
  kind: "model" | "tool";
  label: string;
  start: number;
  /** Undefined while it has not ended. */
  end: number | undefined;
  /** A tool call's result status (ok, error, denied). */
  status?: string;
  /** Set for a subagent's call: its session. */
  session: string;
}

/** The spans of the run's model and tool calls, in the order they started. */
export function spansOf(events: readonly RunEventRow[]): Span[] {
  const spans: Span[] = [];
  const open = new Map<string, Span>();
  for (const row of events) {
    const e = row.event as Record<string, unknown> & { type?: string; ts?: string; session_id?: string };
    const at = typeof e.ts === "string" ? Date.parse(e.ts) : NaN;
    if (!Number.isFinite(at)) continue;
    const session = String(e.session_id ?? "");
    if (e.type === "turn.start") {
      const span: Span = { kind: "model", label: `model call ${e.turn}`, start: at, end: undefined, session };
      spans.push(span);
      open.set(`turn:${session}:${e.turn}`, span);
    } else if (e.type === "turn.end") {
      const span = open.get(`turn:${session}:${e.turn}`);
      if (span) span.end = at;
    } else if (e.type === "tool.call") {
      const span: Span = { kind: "tool", label: String(e.tool), start: at, end: undefined, session };
      spans.push(span);
      open.set(`tool:${e.tool_call_id}`, span);
    } else if (e.type === "tool.result" || e.type === "tool.denied") {
      const span = open.get(`tool:${e.tool_call_id}`);
      if (span) {
        span.end = at;
        span.status = e.type === "tool.denied" ? "denied" : String(e.status);
      }
    }
  }
  return spans;
}

const ROW = 20;
const LABEL = 240;
const WIDTH = 1000;

export function Waterfall(props: { events: readonly RunEventRow[] }) {
  const spans = spansOf(props.events);
  // Keyed (data-key) for the live merge: the chart and its table replace the sentence as elements of their own.
  if (spans.length === 0) return <p class="muted" data-key="timing-none">No model or tool call yet.</p>;
  const main = spans[0]!.session;
  const t0 = Math.min(...spans.map((s) => s.start));
  const t1 = Math.max(...spans.map((s) => s.end ?? s.start));
  const total = Math.max(1, t1 - t0);
  const scale = (WIDTH - LABEL - 8) / total;
  const height = spans.length * ROW + 24;
  const name = (s: Span) => `${s.session !== main ? "↳ " : ""}${s.label}`;
  return (
    <>
      <svg
        class="waterfall"
        data-key="timing-chart"
        viewBox={`0 0 ${WIDTH} ${height}`}
        role="img"
        aria-label={`Timing of ${spans.length} model and tool calls over ${formatDuration(total)}`}
      >
        {spans.map((s, i) => {
          const x = LABEL + (s.start - t0) * scale;
          const w = Math.max(2, ((s.end ?? t1) - s.start) * scale);
          const y = i * ROW + 4;
          return (
            <g>
              <text x={4} y={y + 13}>{shown(name(s)).slice(0, 36)}</text>
              <rect
                class={`${s.kind}${s.status && s.status !== "ok" ? " error" : ""}`}
                x={x.toFixed(1)}
                y={y}
                width={w.toFixed(1)}
                height={ROW - 6}
              >
                <title>
                  {shown(name(s))}: {s.end === undefined ? "running" : formatDuration(s.end - s.start)}
                  {s.status ? ` (${s.status})` : ""}
                </title>
              </rect>
            </g>
          );
        })}
        <text x={LABEL} y={height - 4}>0</text>
        <text x={WIDTH - 8} y={height - 4} text-anchor="end">{formatDuration(total)}</text>
      </svg>
      <details data-key="timing-table">
        <summary>Timing as a table</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Call</th>
              <th scope="col">Kind</th>
              <th scope="col" class="num">Starts at</th>
              <th scope="col" class="num">Took</th>
              <th scope="col">Outcome</th>
            </tr>
          </thead>
          <tbody>
            {spans.map((s) => (
              <tr>
                <td>{shown(name(s))}</td>
                <td>{s.kind}</td>
                <td class="num">+{formatDuration(s.start - t0)}</td>
                <td class="num">{s.end === undefined ? "running" : formatDuration(s.end - s.start)}</td>
                <td>{s.status ?? (s.end === undefined ? "running" : "done")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </>
  );
}
