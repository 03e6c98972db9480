/**
 * The schedules page over HTTP with a real SQLite store and a jobs folder: each scheduled job's next slots (as
 * the daemon computes them, in the job's time zone), its recorded slots as a strip and a table with every
 * outcome marked by a word (success, failed, skipped, crashed), a broken job file named without hiding the
 * others, unscheduled files left out; without a jobs folder the page says how to give one.
 */
import assert from "node:assert/strict";
import { currentProcess } from "../../core/process_identity.ts";
import { consoleFixture, NOW, textOf } from "./_testing.ts";

const HOUR = 3_600_000;
const MODEL = "model: { provider: scripted, script: ./reply.yaml }\nprompt: go\n";

async function jobsDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-console-jobs-" });
  const files: Record<string, string> = {
    "hourly.yaml": `name: hourly\n${MODEL}schedule:\n  cron: "0 * * * *"\n`,
    "nightly.yaml": `name: nightly\n${MODEL}schedule:\n  cron: "0 3 * * *"\n  timezone: Europe/Paris\n` +
      "  catch_up: none\n",
    "broken.yaml": `name: broken\n${MODEL}schedule:\n  cron: "61 * * * *"\n`,
    "plain.yaml": `name: plain\n${MODEL}`,
    "reply.yaml": "- content: hi\n",
  };
  for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(`${dir}/${name}`, text);
  return dir;
}

Deno.test("console schedules: next slots, the latest outcomes as a strip with words, a broken file named", async () => {
  const dir = await jobsDir();
  try {
    await using fx = await consoleFixture({ jobsDir: dir });
    const holder = currentProcess();
    const top = Math.floor(NOW / HOUR) * HOUR; // 12:00 UTC
    const outcomes = ["success", "failed", "crashed", "success"];
    for (const [i, status] of outcomes.entries()) {
      const slot = top - (outcomes.length - i) * HOUR;
      const [claim] = await fx.store.claimSlots([{ job: "hourly", slot }], holder, {
        now: slot,
        lease_ms: HOUR,
      });
      assert.deepEqual(claim, { outcome: "claimed" });
      await fx.store.finishRuns([{
        claim: { job: "hourly", slot },
        holder,
        outcome: { status, session_id: `ses_${i}`, now: slot + 1000 },
      }]);
    }
    assert.equal(
      await fx.store.recordSkipped({ job: "hourly", slot: top, note: "missed" }, holder, NOW),
      true,
    );

    const { cookie } = await fx.session("runs:read");
    const page = await fx.fetchPage("/schedules", { cookie });
    assert.equal(page.response.status, 200);
    const text = textOf(page.text);
    // Next slots: hourly from 13:00 UTC; nightly at 03:00 Paris time (02:00 UTC in December).
    assert.match(text, /hourly Cron 0 \* \* \* \* \(UTC\)/);
    assert.match(text, /2026-12-07 13:00:00 UTC \(in 30 m 00 s\) 2026-12-07 14:00:00 UTC/);
    assert.match(text, /nightly Cron 0 3 \* \* \* \(Europe\/Paris\)/);
    assert.match(text, /2026-12-08 02:00:00 UTC \(in 13 h 30 m\) 2026-12-09 02:00:00 UTC/);
    assert.match(text, /catch_up: none; overlap: skip/);
    // The strip, oldest first, each slot with its word (for a screen reader, and on hover).
    const strip = /<ol class="strip"[^>]*>([\s\S]*?)<\/ol>/.exec(page.text)![1]!;
    assert.deepEqual(
      [...strip.matchAll(/class="slot slot-([a-z]+)"/g)].map((m) => m[1]),
      ["success", "failed", "crashed", "success", "skipped"],
    );
    assert.match(textOf(strip), /08:00:00 UTC success .* 09:00:00 UTC failed .* 10:00:00 UTC crashed/);
    assert.match(textOf(strip), /12:00:00 UTC skipped/);
    assert.match(text, /↷ 1 skipped\s*,\s*✓ 2 success\s*,\s*☠ 1 crashed\s*,\s*✗ 1 failed/, "the tally");
    assert.match(text, /2026-12-07 12:00:00 ↷ skipped 2026-12-07 12:30:00 — missed/);
    assert.match(text, /No slot recorded yet/, "nightly has none");
    // The broken file is named with where and why; the unscheduled one is left out.
    assert.match(text, /broken\.yaml:\d+:\d+: schedule\.cron/);
    assert.ok(!/plain/.test(text.replace(dir, "")), "a job without a schedule is not listed");
    assert.doesNotMatch(page.text, /<script>|<style>| style=| on[a-z]+=/i);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("console schedules: without a jobs folder the page says how to give one; it needs a session", async () => {
  await using fx = await consoleFixture();
  assert.equal((await fx.fetchPage("/schedules")).response.status, 303, "to the sign-in page");
  const { cookie } = await fx.session("runs:read");
  const page = await fx.fetchPage("/schedules", { cookie });
  assert.equal(page.response.status, 200);
  assert.match(textOf(page.text), /started without a jobs folder: start it with hermes serve --jobs DIR/);
});

Deno.test("console schedules: an edited job file is read again; a removed one leaves the page", async () => {
  const dir = await jobsDir();
  try {
    await using fx = await consoleFixture({ jobsDir: dir });
    const { cookie } = await fx.session("runs:read");
    const before = textOf((await fx.fetchPage("/schedules", { cookie })).text);
    assert.match(before, /hourly Cron 0 \* \* \* \*/);
    await Deno.writeTextFile(`${dir}/hourly.yaml`, `name: hourly\n${MODEL}schedule:\n  cron: "15 * * * *"\n`);
    // A later modification time, as an editor's save would leave (the same millisecond would not be seen).
    await Deno.utime(`${dir}/hourly.yaml`, new Date(), new Date(Date.now() + 5000));
    const after = textOf((await fx.fetchPage("/schedules", { cookie })).text);
    assert.match(after, /hourly Cron 15 \* \* \* \*/);
    assert.match(after, /2026-12-07 13:15:00 UTC \(in 45 m 00 s\)/);
    await Deno.remove(`${dir}/hourly.yaml`);
    const gone = textOf((await fx.fetchPage("/schedules", { cookie })).text);
    assert.doesNotMatch(gone, /hourly/);
    assert.match(gone, /nightly/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
