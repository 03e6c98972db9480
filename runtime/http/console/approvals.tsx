/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
/**
 * The approvals page: the tool calls that runs with `approval: {api: true}` parked for a person, each with
 * its tool, its arguments (as stored: secrets already replaced; shown as inert text), what it acts on, why the
 * rules did not allow it and the rule that would, the run and session it holds, its age and when it expires;
 * Allow and Deny post a decision (CSRF token, `approvals` scope) through the same App operation as
 * POST /v1/approvals/ID, and the waiting run continues at once, wherever it runs. The list looks again every
 * few seconds; the reason fields keep what is typed in them across those looks (hx-preserve).
 */
import type { Context } from "hono";
import { type Approval, ApprovalDecidedError, NotFoundError } from "../../app/mod.ts";
import { formatDuration, formatTime, shown, shownJson } from "./format.ts";
import type { ConsoleEnv, ConsolePage, PageKit } from "./page.ts";

/**
 * How many pending approvals the page shows, the oldest first (deciding them brings the next ones; the API
 * lists them all): a page of cards a person can work through, which paints quickly.
 */
export const MAX_SHOWN = 50;

function Pending(props: { approvals: Approval[]; now: number; csrf: string; pollMs: number }) {
  return (
    <div
      id="approvals-pending"
      hx-get="/approvals/pending"
      hx-trigger={`every ${Math.max(1, Math.round(props.pollMs / 1000))}s`}
      hx-swap="outerHTML"
    >
      {props.approvals.length === 0
        ? <p class="muted">No call waits for a decision.</p>
        : props.approvals.slice(0, MAX_SHOWN).map((a) => (
          <Card key={a.id} approval={a} now={props.now} csrf={props.csrf} />
        ))}
      {props.approvals.length > MAX_SHOWN
        ? (
          <p class="notice" role="status">
            More than {MAX_SHOWN} calls wait: the {MAX_SHOWN}{" "}
            waiting longest are shown; deciding them brings the next.
          </p>
        )
        : null}
    </div>
  );
}

function Card(props: { approval: Approval; now: number; csrf: string }) {
  const a = props.approval;
  const heading = `approval-${a.id}`;
  return (
    <article class="approval" data-approval={a.id} aria-labelledby={heading}>
      <h2 id={heading}>
        <span class="status status-waiting_approval">
          <span aria-hidden="true">⏸</span> pending
        </span>{" "}
        <code>{shown(a.tool)}</code>
        {a.server ? <span class="muted">from MCP server {shown(a.server)}</span> : null}
      </h2>
      <dl class="facts">
        <dt>Run</dt>
        <dd>
          {a.run_id
            ? <a class="mono" href={`/runs/${encodeURIComponent(a.run_id)}`}>{a.run_id}</a>
            : <span class="muted">not a queued run</span>} <span class="muted">job</span> {shown(a.job)}
        </dd>
        <dt>Session</dt>
        <dd class="mono">{a.session_id}</dd>
        <dt>Why it asks</dt>
        <dd>{shown(a.reason)}</dd>
        <dt>Rule that would allow it</dt>
        <dd>
          <code>{shown(a.rule)}</code>
        </dd>
        {a.subject ? <dt>Acts on</dt> : null}
        {a.subject ? <dd class="mono">{shown(a.subject)}</dd> : null}
        <dt>Asked</dt>
        <dd>
          {formatTime(a.created_at)} UTC ({formatDuration(props.now - a.created_at)} ago)
        </dd>
        <dt>Expires</dt>
        <dd>
          {formatTime(a.expires_at)} UTC (in {formatDuration(a.expires_at - props.now)}; then denied)
        </dd>
      </dl>
      <h3>Arguments</h3>
      <pre class="args">{shownJson(a.arguments)}</pre>
      <form class="decide" method="post" action={`/approvals/${encodeURIComponent(a.id)}`}>
        <input type="hidden" name="_csrf" value={props.csrf} />
        <label>
          Reason (optional, reaches the model with a denial)
          <input id={`reason-${a.id}`} hx-preserve="true" name="reason" maxlength={2000} />
        </label>
        <button type="submit" name="decision" value="allow">
          <span aria-hidden="true">✓</span> Allow
        </button>
        <button type="submit" name="decision" value="deny" class="danger">
          <span aria-hidden="true">✗</span> Deny
        </button>
      </form>
    </article>
  );
}

/** The oldest first: the one waiting longest is on top. */
async function pending(kit: PageKit) {
  // One more than shown: whether more wait.
  return await kit.app.approvals({ status: "pending", limit: MAX_SHOWN + 1 });
}

async function listPage(
  c: Context<ConsoleEnv>,
  kit: PageKit,
  notice?: { text: string; error: boolean },
  status: 200 | 400 | 404 = 200,
) {
  const waiting = await pending(kit);
  return kit.page(
    c,
    "Approvals",
    <>
      <h1>Approvals</h1>
      <p class="muted">
        Tool calls of runs with <code>approval: {"{api: true}"}</code>{" "}
        that the job's rules do not allow. The run waits until one is allowed or denied here (or over the
        API), or until it expires; this list updates itself.
      </p>
      {notice
        ? (
          <div class={notice.error ? "notice error" : "notice"} role={notice.error ? "alert" : "status"}>
            {notice.text}
          </div>
        )
        : null}
      <Pending approvals={waiting} now={kit.clock.now()} csrf={c.get("session").csrf} pollMs={kit.pollMs} />
    </>,
    status,
  );
}

export const approvalsPage: ConsolePage = {
  nav: { label: "Approvals", href: "/approvals" },
  register(router, kit) {
    router.get("/approvals", kit.signedIn("approvals"), async (c) => {
      const decided = c.req.query("decided");
      const as = c.req.query("as");
      const notice = decided && (as === "allowed" || as === "denied")
        ? { text: `Approval ${decided} ${as}; the run continues.`, error: false }
        : undefined;
      return await listPage(c, kit, notice);
    });

    router.get("/approvals/pending", kit.signedIn("approvals"), async (c) => {
      return c.html(
        String(
          <Pending
            approvals={await pending(kit)}
            now={kit.clock.now()}
            csrf={c.get("session").csrf}
            pollMs={kit.pollMs}
          />,
        ),
      );
    });

    router.post("/approvals/:id", kit.signedIn("approvals"), kit.csrf, async (c) => {
      const id = c.req.param("id");
      const form = await c.req.parseBody();
      const decision = form["decision"];
      const reason = typeof form["reason"] === "string" ? form["reason"].trim() : "";
      if (decision !== "allow" && decision !== "deny") {
        return await listPage(c, kit, { text: `decision: expected allow or deny`, error: true }, 400);
      }
      try {
        const approval = await kit.app.decideApproval(id, {
          decision,
          ...(reason ? { reason } : {}),
          by: c.get("token").id,
        });
        return c.redirect(
          `/approvals?decided=${encodeURIComponent(approval.id)}&as=${approval.status}`,
          303,
        );
      } catch (error) {
        // Only the first decision counts: a second one (another tab, another operator, the timeout) is told so.
        if (error instanceof ApprovalDecidedError || error instanceof NotFoundError) {
          return await listPage(c, kit, { text: error.message, error: true }, 400);
        }
        throw error;
      }
    });
  },
};
