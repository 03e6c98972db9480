/** `hermes sessions compact` through the real CLI, with the session's own (scripted) model. */
import assert from "node:assert/strict";
import { tempStore } from "../../runtime/session_admin/_fixture.ts";
import { hermes, isUserError } from "./_test_support.ts";

const SUMMARY = [
  "## Goal\nShip the release.",
  "## Constraints\nnone",
  "## Progress\nRan the checks.",
  "## Decisions\nnone",
  "## Files and identifiers\nCHANGELOG.md",
  "## Next steps\nTag it.",
].join("\n");

Deno.test("sessions compact summarises the middle with the session's model; a second run has nothing to do", async () => {
  await using fx = await tempStore();
  await Deno.writeTextFile(`${fx.dir}/replies.json`, JSON.stringify([{ content: SUMMARY }]));
  const spec = {
    name: "release",
    model: { provider: "scripted", script: "replies.json" },
    compaction: { protect_first: 1, protect_last: 2 },
  };
  const id =
    (await fx.store.createSession({ job: "release", config_json: JSON.stringify({ spec, dir: fx.dir }) })).id;
  await fx.store.appendMessages(
    id,
    Array.from({ length: 10 }, (_, i) => ({
      role: i % 2 === 0 ? "user" as const : "assistant" as const,
      content: `step ${i}: ${"a detailed progress report on the release checks ".repeat(12)}`,
    })),
  );

  const first = await hermes([
    "sessions",
    "compact",
    id,
    "--focus",
    "the release",
    "--json",
    "--home",
    fx.dir,
  ]);
  assert.equal(first.code, 0, first.stderr);
  const outcome = JSON.parse(first.stdout);
  assert.equal(outcome.session_id, id);
  assert.equal(outcome.changed, true);
  assert.equal(outcome.kind, "summarize");
  assert.ok(outcome.after_tokens < outcome.before_tokens);

  const shown = JSON.parse(
    (await hermes(["sessions", "show", id, "--all", "--json", "--home", fx.dir])).stdout,
  );
  const inactive = shown.messages.filter((m: { active: boolean }) => !m.active);
  const summaries = shown.messages.filter((m: { kind: string }) => m.kind === "summary");
  assert.equal(inactive.length - summaries.length, outcome.messages_removed, "active before − after");
  assert.equal(summaries.length, 1);
  assert.match(summaries[0].content, /Ship the release/);

  const second = await hermes(["sessions", "compact", id, "--home", fx.dir]);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, new RegExp(`^${id}: nothing compacted: `));

  const missing = await hermes(["sessions", "compact", "nope", "--home", fx.dir]);
  assert.ok(isUserError(missing), missing.stderr);
  assert.match(missing.stderr, /unknown session id "nope"/);
});

Deno.test("sessions compact exits 1 and changes nothing when the summary call fails", async () => {
  await using fx = await tempStore();
  await Deno.writeTextFile(
    `${fx.dir}/replies.json`,
    JSON.stringify([{ error: { status: 400, message: "model unavailable" } }]),
  );
  const spec = {
    name: "x",
    model: { provider: "scripted", script: "replies.json" },
    compaction: { protect_first: 1, protect_last: 1 },
  };
  const id =
    (await fx.store.createSession({ job: "x", config_json: JSON.stringify({ spec, dir: fx.dir }) })).id;
  await fx.store.appendMessages(
    id,
    Array.from({ length: 6 }, (_, i) => ({ role: "user" as const, content: `m${i} `.repeat(200) })),
  );

  const r = await hermes(["sessions", "compact", id, "--home", fx.dir]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /nothing compacted: .*model unavailable/);
  assert.equal((await fx.store.activeMessages(id)).length, 6);
});
