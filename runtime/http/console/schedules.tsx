/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
/**
 * The schedules page: each scheduled job of the server's jobs folder (`hermes serve --jobs`) with its cron,
 * its next slots (computed as the daemon computes them) and its latest slots as a strip, oldest to newest,
 * each marked by a symbol and a word (success, failed, skipped, crashed, …) so colour only adds to it; the
 * same slots follow as a table with their times and notes.
 */
import type { ScheduleSlot, ScheduleView } from "../../app/mod.ts";
import { formatDuration, formatTime, shown } from "./format.ts";
import type { ConsolePage } from "./page.ts";

/** Slot outcomes: the symbol drawn in the strip and the word beside it. */
const OUTCOMES: Record<string, { symbol: string; word: string }> = {
  success: { symbol: "✓", word: "success" },
  failed: { symbol: "✗", word: "failed" },
  skipped: { symbol: "↷", word: "skipped" },
  crashed: { symbol: "☠", word: "crashed" },
  abandoned: { symbol: "⊘", word: "abandoned" },
  running: { symbol: "◐", word: "running" },
  rerunning: { symbol: "◐", word: "rerunning" },
  limit: { symbol: "!", word: "limit" },
  interrupted: { symbol: "■", word: "interrupted" },
};

function outcomeOf(status: string) {
  return OUTCOMES[status] ?? { symbol: "·", word: status };
}

function Strip(props: { slots: ScheduleSlot[] }) {
  // Oldest on the left, as a timeline reads.
  const slots = [...props.slots].reverse();
  return (
    <ol class="strip" aria-label="Latest slots, oldest first">
      {slots.map((s) => {
        const { symbol, word } = outcomeOf(s.status);
        return (
          <li
            class={`slot slot-${s.status.replace(/[^a-z_]/g, "")}`}
            title={`${formatTime(s.slot)} UTC: ${word}`}
          >
            <span aria-hidden="true">{symbol}</span>
            <span class="visually-hidden">{formatTime(s.slot)} UTC {word}</span>
          </li>
        );
      })}
    </ol>
  );
}

function Job(props: { job: ScheduleView; now: number }) {
  const { job, now } = props;
  const counts = new Map<string, number>();
  for (const s of job.last_slots) counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
  const heading = `job-${job.name}`;
  return (
    <section class="schedule" data-job={job.name} aria-labelledby={heading}>
      <h2 id={heading}>{shown(job.name)}</h2>
      <dl class="facts">
        <dt>Cron</dt>
        <dd>
          <code>{shown(job.cron)}</code> {job.timezone ? `(${shown(job.timezone)})` : "(UTC)"}
        </dd>
        <dt>Missed slots</dt>
        <dd>
          catch_up: {job.catch_up}; overlap: {job.overlap}
        </dd>
        <dt>File</dt>
        <dd class="mono">{shown(job.path)}</dd>
      </dl>
      <h3>Next slots</h3>
      {job.next_slots.length === 0
        ? <p class="muted">None: the cron names no later time.</p>
        : (
          <ol class="next-slots">
            {job.next_slots.map((slot) => (
              <li class="mono">
                {formatTime(slot)} UTC <span class="muted">(in {formatDuration(slot - now)})</span>
              </li>
            ))}
          </ol>
        )}
      <h3>Latest slots</h3>
      {job.last_slots.length === 0 ? <p class="muted">No slot recorded yet (no daemon ran it).</p> : (
        <>
          <Strip slots={job.last_slots} />
          <p class="tally">
            {[...counts].map(([status, n], i) => (
              <>
                {i > 0 ? ", " : ""}
                <span class={`status slot-${status.replace(/[^a-z_]/g, "")}`}>
                  <span aria-hidden="true">{outcomeOf(status).symbol}</span> {n} {outcomeOf(status).word}
                </span>
              </>
            ))}
          </p>
          <details>
            <summary>Latest slots as a table</summary>
            <table>
              <thead>
                <tr>
                  <th scope="col">Slot (UTC)</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Finished (UTC)</th>
                  <th scope="col">Session</th>
                  <th scope="col">Note</th>
                </tr>
              </thead>
              <tbody>
                {job.last_slots.map((s) => (
                  <tr data-slot={s.slot}>
                    <td class="mono">{formatTime(s.slot)}</td>
                    <td>
                      <span class={`status slot-${s.status.replace(/[^a-z_]/g, "")}`}>
                        <span aria-hidden="true">{outcomeOf(s.status).symbol}</span>{" "}
                        {outcomeOf(s.status).word}
                      </span>
                    </td>
                    <td class="mono">{formatTime(s.finished_at)}</td>
                    <td class="mono">{s.session_id ?? "—"}</td>
                    <td>{s.note ? shown(s.note) : "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        </>
      )}
    </section>
  );
}

export const schedulesPage: ConsolePage = {
  nav: { label: "Schedules", href: "/schedules" },
  register(router, kit) {
    router.get("/schedules", kit.signedIn("runs:read"), async (c) => {
      if (kit.jobsDir === undefined) {
        return kit.page(
          c,
          "Schedules",
          <>
            <h1>Schedules</h1>
            <p class="notice">
              This server was started without a jobs folder: start it with{" "}
              <code>hermes serve --jobs DIR</code> to see the scheduled jobs of DIR here.
            </p>
          </>,
        );
      }
      const report = await kit.app.schedules({ paths: [kit.jobsDir] });
      const now = kit.clock.now();
      return kit.page(
        c,
        "Schedules",
        <>
          <h1>Schedules</h1>
          <p class="muted">
            The jobs with a <code>schedule:</code> in <span class="mono">{shown(kit.jobsDir)}</span>{" "}
            and the slots a daemon (<code>hermes daemon</code>) recorded for them. Legend:{" "}
            {["success", "failed", "skipped", "crashed", "abandoned", "running"].map((s, i) => (
              <>
                {i > 0 ? ", " : ""}
                <span aria-hidden="true">{outcomeOf(s).symbol}</span> {s}
              </>
            ))}.
          </p>
          {report.problems.map((p) => <div key={p} class="notice error" role="alert">{shown(p)}</div>)}
          {report.jobs.length === 0
            ? <p class="muted">No job in this folder has a schedule.</p>
            : report.jobs.map((job) => <Job key={job.name} job={job} now={now} />)}
        </>,
      );
    });
  },
};
