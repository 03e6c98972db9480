/** `hermes sessions prune` through the real CLI on a real store. */
import assert from "node:assert/strict";
import { sqliteHandle } from "../../runtime/store/sqlite/_testing.ts";
import { addSessions, count, tempStore } from "../../runtime/session_admin/_testing.ts";
import { canFakeTerminal, hermes, hermesOnTerminal, isUserError } from "./_testing.ts";

const DAY = 86_400_000;

/** 40 sessions; session i was last updated i days and 12 hours ago. */
async function agedStore() {
  const fx = await tempStore();
  const sessions = await addSessions(fx, 40);
  const now = Date.now();
  sessions.forEach((s, i) => {
    sqliteHandle(fx.store).stmt("UPDATE sessions SET updated_at = ? WHERE id = ?").run(
      now - i * DAY - DAY / 2,
      s.id,
    );
  });
  const older = (days: number, job?: string) =>
    sessions.filter((s, i) => i >= days && (job === undefined || s.job === job))
      .sort((x, y) => x.created_at - y.created_at).map((s) => s.id);
  return { fx, sessions, older, home: ["--home", fx.dir] };
}

Deno.test("sessions prune: --dry-run lists exactly what --yes then deletes; without consent it refuses", async () => {
  const { fx, older, home } = await agedStore();
  await using _ = fx;
  const expected = older(30, "triage");

  const refused = await hermes(["sessions", "prune", "--older-than", "30d", ...home]);
  assert.ok(isUserError(refused), refused.stderr);
  assert.match(refused.stderr, /--yes/);
  assert.equal(count(fx.store, "SELECT count(*) FROM sessions"), 40);

  const dry = await hermes([
    "sessions",
    "prune",
    "--older-than",
    "30d",
    "--job",
    "triage",
    "--dry-run",
    ...home,
  ]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(dry.stdout, expected.map((id) => `${id}\n`).join(""));
  assert.match(dry.stderr, new RegExp(`would delete ${expected.length} sessions`));
  assert.equal(count(fx.store, "SELECT count(*) FROM sessions"), 40);

  const real = await hermes([
    "sessions",
    "prune",
    "--older-than",
    "30d",
    "--job",
    "triage",
    "--yes",
    ...home,
  ]);
  assert.equal(real.code, 0, real.stderr);
  assert.equal(real.stdout, dry.stdout);
  assert.equal(count(fx.store, "SELECT count(*) FROM sessions"), 40 - expected.length);

  const json = await hermes(["sessions", "prune", "--older-than", "35d", "--yes", "--json", ...home]);
  const report = JSON.parse(json.stdout);
  assert.equal(report.dry_run, false);
  assert.deepEqual(report.pruned_ids, older(35).filter((id) => !expected.includes(id)));
  assert.deepEqual(report.skipped, []);
});

Deno.test("sessions prune: flag errors exit 2", async () => {
  const home = await Deno.makeTempDir();
  try {
    for (
      const [args, pattern] of [
        [[], /--older-than is required/],
        [["--older-than", "soon"], /--older-than "soon"/],
        [["--older-than", "30"], /--older-than "30": a unit is required, for example 30d/],
        [["--older-than", "30", "--yes"], /a unit is required/],
        [["--older-than", "1d", "--yes", "x"], /unexpected argument "x"/],
      ] as const
    ) {
      const r = await hermes(["sessions", "prune", ...args, "--home", home]);
      assert.ok(isUserError(r), r.stderr);
      assert.match(r.stderr, pattern);
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test({
  name: "sessions prune asks on a terminal: no keeps everything, yes deletes",
  ignore: !canFakeTerminal(),
}, async () => {
  const { fx, older, home } = await agedStore();
  await using _ = fx;
  const no = await hermesOnTerminal(["sessions", "prune", "--older-than", "38d", ...home], "n\n");
  assert.equal(no.code, 1, no.stdout);
  assert.match(no.stdout, /Delete 2 sessions not updated since .*\? \[y\/N\]/);
  assert.match(no.stdout, /cancelled; nothing was deleted/);
  assert.equal(count(fx.store, "SELECT count(*) FROM sessions"), 40);

  const yes = await hermesOnTerminal(["sessions", "prune", "--older-than", "38d", ...home], "y\n");
  assert.equal(yes.code, 0, yes.stdout);
  for (const id of older(38)) assert.match(yes.stdout, new RegExp(`^${id}$`, "m"));
  assert.equal(count(fx.store, "SELECT count(*) FROM sessions"), 38);
});
