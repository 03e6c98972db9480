/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
/**
 * A run's page: what it is (job, trigger, times, labels, inputs), a waterfall of its model and tool calls, its
 * transcript (tool calls with their arguments and results folded, compactions marked, subagents' transcripts
 * nested under the call that delegated them), the result object and the notification deliveries; cancel while
 * it has not ended. While it runs, the server streams the page's body again whenever it changed (live.ts):
 * new transcript items are appended, and what the reader opened stays open.
 *
 * Every stored text is shown as text (the renderer escapes it; control characters become visible escapes):
 * markup in a tool's output is never markup here. Secrets were replaced before the store saw them.
 */
import type { MessageRecord, QueuedRun, RunDelivery, RunEventRow } from "../../app/mod.ts";
import { hasEnded } from "../../app/mod.ts";
import { formatCost, formatCount, formatDuration, formatTime, shown, shownJson } from "./format.ts";
import { Status } from "./layout.tsx";
import type { ConsoleEnv, ConsolePage, PageKit } from "./page.ts";
import type { Context } from "hono";
import { Waterfall } from "./waterfall.tsx";

/** How many subagent transcripts a run page loads at most. */
const MAX_CHILDREN = 50;

interface RunView {
  run: QueuedRun;
  events: RunEventRow[];
  deliveries: RunDelivery[];
  /** Transcripts by session id: the run's own and its subagents'. */
  transcripts: Map<string, MessageRecord[]>;
  /** The child session each delegate call started, by the call's id. */
  children: Map<string, { agent: string; session: string }>;
  now: number;
}

async function loadRun(kit: PageKit, ref: string): Promise<RunView> {
  const run = await kit.app.getRun(ref);
  const [events, deliveries] = await Promise.all([kit.app.runEvents(run.id), kit.app.runDeliveries(run.id)]);
  const transcripts = new Map<string, MessageRecord[]>();
  const children = new Map<string, { agent: string; session: string }>();
  for (const row of events) {
    const event = row.event as {
      type?: string;
      agent?: string;
      child_session_id?: string;
      tool_call_id?: string;
    };
    if (
      event.type === "agent.start" && event.child_session_id && event.tool_call_id &&
      children.size < MAX_CHILDREN
    ) {
      children.set(event.tool_call_id, { agent: event.agent ?? "agent", session: event.child_session_id });
    }
  }
  const sessions = [
    ...(run.session_id ? [run.session_id] : []),
    ...[...children.values()].map((c) => c.session),
  ];
  await Promise.all(sessions.map(async (id) => {
    const transcript = await kit.app.transcript(id, { all: true }).catch(() => undefined);
    if (transcript) transcripts.set(id, transcript.messages);
  }));
  return { run, events, deliveries, transcripts, children, now: kit.clock.now() };
}

type Usage = { prompt_tokens?: number; completion_tokens?: number };

function tokens(usage: Usage): string {
  return `${formatCount(usage.prompt_tokens)} in, ${formatCount(usage.completion_tokens)} out`;
}

function Facts(props: { view: RunView }) {
  const { run } = props.view;
  const result = run.result as
    | {
      usage?: Usage;
      cost_usd?: number | null;
      terminal_reason?: string;
      total?: { usage?: Usage; cost_usd?: number | null };
    }
    | null;
  const ended = hasEnded(run);
  const elapsed = run.started_at === null
    ? null
    : (run.finished_at ?? (ended ? run.started_at : props.view.now)) - run.started_at;
  const rows: [string, unknown][] = [
    ["Job", shown(run.job)],
    ["Trigger", run.trigger],
    ["Submitted", formatTime(run.submitted_at)],
    ["Started", formatTime(run.started_at)],
    ["Finished", formatTime(run.finished_at)],
    ["Duration", formatDuration(elapsed)],
    ["Attempts", String(run.attempts)],
    ["Model", run.model ? shown(run.model) : "—"],
    [
      "Tokens",
      result?.usage
        ? tokens(result.usage) +
          (result.total?.usage ? ` (${tokens(result.total.usage)} with its subagents)` : "")
        : "—",
    ],
    [
      "Cost",
      formatCost(result?.cost_usd) +
      (result?.total ? ` (${formatCost(result.total.cost_usd)} with its subagents)` : ""),
    ],
    ["Why it ended", result?.terminal_reason ? shown(result.terminal_reason) : "—"],
    ["Session", run.session_id ?? "—"],
    [
      "Labels",
      Object.keys(run.labels).length
        ? shown(Object.entries(run.labels).map(([k, v]) => `${k}=${v}`).join(", "))
        : "—",
    ],
    [
      "Inputs",
      Object.keys(run.inputs).length
        ? shown(Object.entries(run.inputs).map(([k, v]) => `${k}=${v}`).join(", "))
        : "—",
    ],
    ...(run.note ? [["Note", shown(run.note)] as [string, unknown]] : []),
  ];
  return (
    <dl class="facts" data-key="facts">
      {rows.map(([name, value]) => (
        <>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </>
      ))}
    </dl>
  );
}

/**
 * One session's messages; a tool call holds its result, and a delegate call the child's transcript. Every part
 * that can come, go or move while the run goes on carries a `data-key` unique in the page (built from the
 * session id and the message's seq, never from model-written text), by which the live merge (static/console.js)
 * finds the element the reader already has: a tool call's <details> stays the same element, open or not, when
 * its result or its subagent's transcript arrives, when a compaction folds its message, when anything before it
 * changes.
 */
function Transcript(props: { view: RunView; session: string; depth: number }) {
  const messages = props.view.transcripts.get(props.session);
  const key = (part: string) => `${part}:${props.session}`;
  if (!messages) {
    return (
      <p class="muted" data-key={key("no-transcript")}>No transcript stored for session {props.session}.</p>
    );
  }
  const results = new Map<string, MessageRecord>();
  for (const m of messages) if (m.role === "tool" && m.tool_call_id) results.set(m.tool_call_id, m);
  // Messages a compaction replaced (kept in the store) are folded together, followed by the summary that
  // replaced them (which sits among them in prompt order).
  const segments: ({ message: MessageRecord } | { compacted: MessageRecord[] })[] = [];
  let compacted: MessageRecord[] = [];
  let summaries: MessageRecord[] = [];
  const flush = () => {
    if (compacted.length) segments.push({ compacted });
    for (const summary of summaries) segments.push({ message: summary });
    compacted = [];
    summaries = [];
  };
  for (const m of messages) {
    if (
      m.role === "tool" && m.tool_call_id &&
      messages.some((o) => o.tool_calls?.some((t) => t.id === m.tool_call_id))
    ) {
      continue; // Shown inside its call.
    }
    if (!m.active) compacted.push(m);
    else if (m.kind === "summary") summaries.push(m);
    else {
      flush();
      segments.push({ message: m });
    }
  }
  flush();
  const one = (m: MessageRecord) => (
    <>
      {m.kind === "summary"
        ? (
          <p class="marker" data-key={key(`summary-marker:${m.seq}`)}>
            ── Compaction summary: what the model saw instead of the messages it replaced ──
          </p>
        )
        : null}
      <div
        class={`msg ${m.role}${m.active ? "" : " inactive"}`}
        data-seq={m.seq}
        data-key={key(`msg:${m.seq}`)}
      >
        <div class="who">
          {m.role}
          {m.kind !== "message" ? ` · ${m.kind}` : ""}
          {m.active ? "" : " · removed by compaction"} · {m.created_at}
        </div>
        {m.content ? <pre>{shown(m.content)}</pre> : null}
        {(m.tool_calls ?? []).map((call, index) => {
          const result = results.get(call.id);
          const child = props.view.children.get(call.id);
          const callKey = (part: string) => key(`${part}:${m.seq}:${index}`);
          return (
            <details data-key={callKey("call")}>
              <summary>
                Tool call <code>{shown(call.name)}</code>
                {result ? "" : " (no result stored)"}
                {child ? ` · subagent ${shown(child.agent)}` : ""}
              </summary>
              <div class="muted">Arguments</div>
              <pre>{shownArguments(call.arguments)}</pre>
              {result
                ? (
                  <>
                    <div class="muted" data-key={callKey("result-label")}>Result</div>
                    <pre data-key={callKey("result")}>{shown(result.content)}</pre>
                  </>
                )
                : null}
              {child && props.depth < 5
                ? (
                  <div class="subagent" data-key={`subagent:${child.session}`}>
                    <div class="muted">Subagent {shown(child.agent)}, session {child.session}</div>
                    <Transcript view={props.view} session={child.session} depth={props.depth + 1} />
                  </div>
                )
                : null}
            </details>
          );
        })}
      </div>
    </>
  );
  return (
    <div class="transcript" data-key={key("transcript")}>
      {segments.map((segment) =>
        "message" in segment
          ? one(segment.message)
          : (
            <details class="compacted" data-key={key(`compacted:${segment.compacted[0]!.seq}`)}>
              <summary class="marker">
                ── {segment.compacted.length} {segment.compacted.length === 1 ? "message" : "messages"}{" "}
                removed by a compaction (kept in the store) ──
              </summary>
              {segment.compacted.map(one)}
            </details>
          )
      )}
    </div>
  );
}

/** A tool call's arguments as indented JSON when they parse, else as the model wrote them. */
function shownArguments(text: string): string {
  try {
    return shownJson(JSON.parse(text));
  } catch {
    return shown(text);
  }
}

function Deliveries(props: { deliveries: RunDelivery[] }) {
  if (props.deliveries.length === 0) {
    return <p class="muted" data-key="no-deliveries">No notification for this run.</p>;
  }
  return (
    <table data-key="deliveries">
      <thead>
        <tr>
          <th scope="col">Event</th>
          <th scope="col">Target</th>
          <th scope="col">Status</th>
          <th scope="col" class="num">Attempts</th>
          <th scope="col" class="num">Response</th>
        </tr>
      </thead>
      <tbody>
        {props.deliveries.map((d) => (
          <tr>
            <td>{shown(d.event)}</td>
            <td class="mono">{shown(d.target)}</td>
            <td>{d.status}</td>
            <td class="num">{d.attempts}</td>
            <td class="num">{d.response_status ?? "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function RunBody(props: { view: RunView; csrf: string; pollMs: number; canCancel: boolean }) {
  const { run } = props.view;
  const ended = hasEnded(run);
  const base = `/runs/${encodeURIComponent(run.id)}`;
  return (
    <div
      id="run"
      data-live={ended ? undefined : `${base}/stream`}
      data-fallback={ended ? undefined : `${base}/live`}
      data-poll-ms={ended ? undefined : String(props.pollMs)}
    >
      <h1>
        Run <span class="mono">{run.id}</span> <Status status={run.status} />
      </h1>
      {!ended && props.canCancel
        ? (
          <form method="post" action={`/runs/${encodeURIComponent(run.id)}/cancel`} data-key="cancel">
            <input type="hidden" name="_csrf" value={props.csrf} />
            <button type="submit" class="danger">
              {run.cancel_requested ? "Cancel asked; ask again" : "Cancel run"}
            </button>
          </form>
        )
        : null}
      <Facts view={props.view} />
      <h2>Timing</h2>
      <Waterfall events={props.view.events} />
      <h2>Transcript</h2>
      {run.session_id
        ? <Transcript view={props.view} session={run.session_id} depth={0} />
        : <p class="muted" data-key="no-session">The run has no session yet.</p>}
      <h2>Result</h2>
      {run.result
        ? <pre data-key="result">{shownJson(run.result)}</pre>
        : <p class="muted" data-key="no-result">No result yet.</p>}
      <h2>Notifications</h2>
      <Deliveries deliveries={props.view.deliveries} />
    </div>
  );
}

export const runPage: ConsolePage = {
  register(router, kit) {
    const canCancel = (scopes: string[]) => scopes.includes("runs:write") || scopes.includes("admin");

    router.get("/runs/:id{[^/]+}", kit.signedIn("runs:read"), async (c) => {
      const view = await loadRun(kit, c.req.param("id"));
      return kit.page(
        c,
        `Run ${view.run.id}`,
        <>
          <p>
            <a href="/runs">← Runs</a>
          </p>
          <RunBody
            view={view}
            csrf={c.get("session").csrf}
            pollMs={kit.pollMs}
            canCancel={canCancel(c.get("token").scopes)}
          />
        </>,
      );
    });

    // The page's body as HTML: the live stream's part, and what a browser whose stream failed polls.
    const body = async (c: Context<ConsoleEnv>, ref: string) => {
      const view = await loadRun(kit, ref);
      const html = String(
        <RunBody
          view={view}
          csrf={c.get("session").csrf}
          pollMs={kit.pollMs}
          canCancel={canCancel(c.get("token").scopes)}
        />,
      );
      return { html, ended: hasEnded(view.run) };
    };

    router.get(
      "/runs/:id/live",
      kit.signedIn("runs:read"),
      async (c) => c.html((await body(c, c.req.param("id"))).html),
    );

    router.get("/runs/:id/stream", kit.signedIn("runs:read"), async (c) => {
      const run = await kit.app.getRun(c.req.param("id"));
      return kit.live(c, { key: run.id, render: () => body(c, run.id) });
    });

    router.post("/runs/:id/cancel", kit.signedIn("runs:write"), kit.csrf, async (c) => {
      const run = await kit.app.cancelRun(c.req.param("id"));
      return c.redirect(`/runs/${encodeURIComponent(run.id)}`, 303);
    });
  },
};
