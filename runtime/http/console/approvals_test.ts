/**
 * The approvals page over HTTP with a real SQLite store: a pending call shows its tool, its arguments as inert
 * text, why it asks, the rule, the run and its age and expiry; a token without the `approvals` scope gets a
 * 403 page; a decision without the CSRF token changes nothing; with it the decision is stored as the API's
 * would be (by the session's token), and a second decision is refused.
 */
import assert from "node:assert/strict";
import { consoleFixture, NOW, textOf } from "./_testing.ts";
import { MAX_SHOWN } from "./approvals.tsx";

const HOSTILE = "<script>alert(1)</script>\x1b]52;c;SGVsbG8=\x07";

async function parked(
  fx: Awaited<ReturnType<typeof consoleFixture>>,
  id = "apr_1",
  createdAt = NOW - 90_000,
) {
  return await fx.store.createApproval({
    id,
    run_id: "run_abc",
    session_id: "ses_1",
    job: "reader",
    tool: "read_file",
    tool_call_id: "call_1",
    server: null,
    arguments: { path: `/etc/${HOSTILE}` },
    subject: "/etc/passwd",
    reason: "/etc/passwd is outside tools.read_file.paths",
    rule: "tools.read_file.paths: [/etc]",
    created_at: createdAt,
    expires_at: NOW + 3_600_000,
  });
}

Deno.test("console approvals: a pending call with its arguments inert, reason, rule, run, age and expiry", async () => {
  await using fx = await consoleFixture();
  await parked(fx);
  const { cookie } = await fx.session("approvals", "runs:read");
  const page = await fx.fetchPage("/approvals", { cookie });
  assert.equal(page.response.status, 200);
  const text = textOf(page.text);
  assert.match(text, /pending read_file/);
  assert.match(text, /outside tools\.read_file\.paths/);
  assert.match(text, /Rule that would allow it tools\.read_file\.paths: \[\/etc\]/);
  assert.match(page.text, /href="\/runs\/run_abc"/);
  assert.match(text, /1\.5 m|1 m 30 s ago/);
  assert.match(text, /in 1 h 00 m; then denied/);
  // The arguments are text: no element is made of them and the terminal escape shows as an escape.
  assert.ok(!page.text.includes("<script>alert"), "markup escaped");
  assert.ok(page.text.includes("&lt;script&gt;alert(1)&lt;/script&gt;"));
  assert.ok(!page.text.includes("\x1b"), "no raw escape");
  assert.match(text, /\\u001b\]52;c;SGVsbG8=\\u0007/, "as JSON escapes it");
  assert.doesNotMatch(page.text, /<script>|<style>| style=| on[a-z]+=/i);
  assert.match(page.text, /<button type="submit" name="decision" value="allow"/);

  // The live part: the same cards as a fragment htmx swaps in.
  const polled = await fx.fetchPage("/approvals/pending", { cookie, headers: { "hx-request": "true" } });
  assert.equal(polled.response.status, 200);
  assert.match(polled.text, /^<div id="approvals-pending"/);
  assert.match(polled.text, /data-approval="apr_1"/);
});

Deno.test("console approvals: a token without the approvals scope gets a 403 page and decides nothing", async () => {
  await using fx = await consoleFixture();
  await parked(fx);
  const { cookie, csrf } = await fx.session("runs:read", "runs:write");
  const page = await fx.fetchPage("/approvals", { cookie });
  assert.equal(page.response.status, 403);
  assert.match(textOf(page.text), /lacks the scope approvals/);
  assert.ok(!page.text.includes("read_file"), "nothing of the approval shown");
  const posted = await fx.post("/approvals/apr_1", cookie, { _csrf: csrf, decision: "allow" });
  assert.equal(posted.response.status, 403);
  assert.equal((await fx.app.approval("apr_1")).status, "pending");
  // The neighbour: admin may.
  const admin = await fx.session("admin");
  assert.equal((await fx.fetchPage("/approvals", { cookie: admin.cookie })).response.status, 200);
});

Deno.test("console approvals: a decision needs the CSRF token; with it, it is stored once, by the session's token", async () => {
  await using fx = await consoleFixture();
  await parked(fx, "apr_1");
  await parked(fx, "apr_2");
  const { cookie, csrf, tokenId } = await fx.session("approvals");

  const forged = await fx.post("/approvals/apr_1", cookie, { _csrf: "0".repeat(64), decision: "deny" });
  assert.equal(forged.response.status, 403);
  assert.match(textOf(forged.text), /no valid CSRF token/);
  const bare = await fx.post("/approvals/apr_1", cookie, { decision: "deny" });
  assert.equal(bare.response.status, 403);
  assert.equal((await fx.app.approval("apr_1")).status, "pending");

  const bad = await fx.post("/approvals/apr_1", cookie, { _csrf: csrf, decision: "maybe" });
  assert.equal(bad.response.status, 400);
  assert.match(textOf(bad.text), /decision: expected allow or deny/);

  const denied = await fx.post("/approvals/apr_1", cookie, {
    _csrf: csrf,
    decision: "deny",
    reason: "not that file",
  });
  assert.equal(denied.response.status, 303);
  assert.equal(denied.response.headers.get("location"), "/approvals?decided=apr_1&as=denied");
  const stored = await fx.app.approval("apr_1");
  assert.equal(stored.status, "denied");
  assert.equal(stored.decision_reason, "not that file");
  assert.equal(stored.decided_by, tokenId);

  const allowed = await fx.post("/approvals/apr_2", cookie, { _csrf: csrf, decision: "allow" });
  assert.equal(allowed.response.status, 303);
  assert.equal((await fx.app.approval("apr_2")).status, "allowed");
  assert.equal((await fx.app.approval("apr_2")).decision_reason, null);

  const after = await fx.fetchPage("/approvals?decided=apr_2&as=allowed", { cookie });
  assert.match(textOf(after.text), /Approval apr_2 allowed; the run continues\./);
  assert.match(textOf(after.text), /No call waits for a decision\./);

  const again = await fx.post("/approvals/apr_1", cookie, { _csrf: csrf, decision: "allow" });
  assert.equal(again.response.status, 400);
  assert.match(textOf(again.text), /Cannot decide approval apr_1: it is denied already/);
  assert.equal((await fx.app.approval("apr_1")).status, "denied");
});

Deno.test("console approvals: the oldest 50 pending calls are shown, and that more wait", async () => {
  await using fx = await consoleFixture();
  for (let i = 0; i <= MAX_SHOWN; i++) {
    await parked(fx, `apr_${String(i).padStart(3, "0")}`, NOW - 100_000 + i);
  }
  const { cookie } = await fx.session("approvals");
  const page = await fx.fetchPage("/approvals", { cookie });
  const shownIds = [...page.text.matchAll(/<article class="approval" data-approval="([^"]+)"/g)].map((m) =>
    m[1]
  );
  assert.equal(shownIds.length, MAX_SHOWN);
  assert.equal(shownIds[0], "apr_000", "the one waiting longest first");
  assert.ok(!shownIds.includes(`apr_${MAX_SHOWN}`));
  assert.match(textOf(page.text), /More than 50 calls wait: the 50 waiting longest are shown/);
});
