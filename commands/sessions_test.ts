/** `hermes sessions list|show|export|search` through the real CLI on a real store. */
import assert from "node:assert/strict";
import { addSessions, deactivate, tempStore } from "../runtime/session_admin/_testing.ts";
import type { SessionSummary } from "../runtime/session_admin/records.ts";
import { canFakeTerminal, hermes, hermesOnTerminal, isUserError } from "./sessions/_testing.ts";

/** 30 sessions created one a minute, the newest 30½ minutes ago; every tenth archived. */
async function fixture() {
  // Half a minute off the minute, so `--since 45m` never lands on a session's creation time.
  const fx = await tempStore(Date.now() - 60 * 60_000 + 30_000);
  const sessions = await addSessions(fx, 30);
  return { fx, sessions, home: ["--home", fx.dir] };
}

Deno.test("sessions list: JSON when stdout is not a terminal, with filters; bad flags exit 2", async (t) => {
  const { fx, sessions, home } = await fixture();
  await using _ = fx;
  const visible = sessions.filter((s) => !s.archived).reverse();

  await t.step("no flags: a JSON array of unarchived sessions, newest first", async () => {
    const r = await hermes(["sessions", "list", ...home]);
    assert.equal(r.code, 0, r.stderr);
    const rows = JSON.parse(r.stdout) as SessionSummary[];
    assert.deepEqual(rows.map((s) => s.id), visible.map((s) => s.id));
    assert.equal(rows[0]!.created_at, new Date(visible[0]!.created_at).toISOString());
    assert.equal(r.stderr, "");
  });
  await t.step("--job --limit --archived --since --status", async () => {
    const byJob = JSON.parse(
      (await hermes(["sessions", "list", "--job", "deploy", "--limit", "2", ...home])).stdout,
    );
    assert.deepEqual(
      byJob.map((s: SessionSummary) => s.id),
      visible.filter((s) => s.job === "deploy").slice(0, 2).map((s) => s.id),
    );
    const archived = JSON.parse((await hermes(["sessions", "list", "--archived", "--json", ...home])).stdout);
    assert.deepEqual(
      archived.map((s: SessionSummary) => s.id).sort(),
      sessions.filter((s) => s.archived).map((s) => s.id).sort(),
    );
    const recent = JSON.parse(
      (await hermes(["sessions", "list", "--since", "45m", "--status", "failed", ...home])).stdout,
    );
    const cutoff = Date.now() - 45 * 60_000;
    assert.deepEqual(
      recent.map((s: SessionSummary) => s.id),
      visible.filter((s) => s.created_at >= cutoff && s.status === "failed").map((s) => s.id),
    );
    const at = sessions[20]!.created_at;
    const fromDate = JSON.parse(
      (await hermes(["sessions", "list", "--since", new Date(at).toISOString(), ...home])).stdout,
    );
    assert.deepEqual(
      fromDate.map((s: SessionSummary) => s.id),
      visible.filter((s) => s.created_at >= at).map((s) => s.id),
    );
  });
  await t.step("invalid flags name the flag and exit 2", async () => {
    for (
      const [args, pattern] of [
        [["--limit", "0"], /--limit "0"/],
        [["--status", "nope"], /--status "nope".*running/],
        [["--since", "yesterday"], /--since "yesterday"/],
        [["--since", "2026-13-45"], /--since "2026-13-45": expected a date/],
        [["--bogus"], /--bogus/],
        [["extra"], /unexpected argument "extra"/],
      ] as const
    ) {
      const r = await hermes(["sessions", "list", ...args, ...home]);
      assert.ok(isUserError(r), `${args.join(" ")}: ${r.code} ${r.stderr}`);
      assert.match(r.stderr, pattern);
    }
  });
});

Deno.test({
  name: "sessions list: a table on a terminal",
  ignore: !canFakeTerminal(),
}, async () => {
  const { fx, sessions, home } = await fixture();
  await using _ = fx;
  const r = await hermesOnTerminal(["sessions", "list", "--limit", "3", ...home]);
  assert.equal(r.code, 0, r.stdout);
  const lines = r.stdout.trimEnd().split("\n");
  assert.match(lines[0]!, /^ID\s+JOB\s+STATUS\s+CREATED\s+TURNS\s+TOKENS$/);
  const newest = sessions.filter((s) => !s.archived).reverse().slice(0, 3);
  assert.deepEqual(lines.slice(1).map((l) => l.split(/\s+/)[0]), newest.map((s) => s.id));
});

Deno.test("sessions show: transcript, --all marks compacted and summary rows, --json, text as stored", async () => {
  const { fx, sessions, home } = await fixture();
  await using _ = fx;
  const id = sessions[3]!.id;
  await fx.store.appendMessages(id, [
    // Stored as a session stores it: its secrets were replaced on the way in (runtime/session/outlets.ts).
    { role: "user", content: "deploy with key [REDACTED:MY_API_KEY] and pass [REDACTED:DB_PASSWORD]" },
    { role: "assistant", content: "Summary of the build checks.", kind: "summary" },
  ]);
  deactivate(fx.store, id, [1, 2]);
  const plain = await hermes(["sessions", "show", id, ...home]);
  assert.equal(plain.code, 0, plain.stderr);
  assert.match(plain.stdout, new RegExp(`^session ${id} · job ${sessions[3]!.job}`));
  assert.doesNotMatch(plain.stdout, /\[compacted\]|Check build number/);
  assert.match(plain.stdout, /#5 assistant \[summary\]\n {2}Summary of the build checks\./);
  assert.match(plain.stdout, /\[REDACTED:MY_API_KEY\] and pass \[REDACTED:DB_PASSWORD\]/);

  const all = await hermes(["sessions", "show", id, "--all", ...home]);
  assert.match(all.stdout, /#1 user \[compacted\]\n {2}Check build number 3 of the pipeline/);
  assert.match(all.stdout, /#2 assistant \[compacted\]\n {2}→ shell \(call_3\) \{"command":"ci status 3"\}/);

  const json = JSON.parse(
    (await hermes(["sessions", "show", id, "--all", "--json", ...home])).stdout,
  );
  assert.equal(json.session.id, id);
  assert.deepEqual(json.messages.map((m: { seq: number; active: boolean }) => [m.seq, m.active]), [
    [1, false],
    [2, false],
    [3, true],
    [4, true],
    [5, true],
  ]);
  assert.equal(
    json.messages[3].content,
    "deploy with key [REDACTED:MY_API_KEY] and pass [REDACTED:DB_PASSWORD]",
  );

  const latest = await hermes(["sessions", "show", "latest", "--json", ...home]);
  assert.equal(JSON.parse(latest.stdout).session.id, sessions.filter((s) => !s.archived).at(-1)!.id);

  const missing = await hermes(["sessions", "show", "20990101-000000-zzzzzz", ...home]);
  assert.ok(isUserError(missing), missing.stderr);
  assert.match(missing.stderr, /unknown session id "20990101-000000-zzzzzz"/);
});

Deno.test("sessions export: jsonl to stdout or -o FILE, md", async () => {
  const { fx, sessions, home } = await fixture();
  await using _ = fx;
  const id = sessions[5]!.id;
  await fx.store.appendMessages(id, [{
    role: "assistant",
    content: "",
    tool_calls: [
      { id: "t", name: "http_fetch", arguments: '{"url":"https://x/?token=[REDACTED:MY_API_KEY]"}' },
    ],
  }]);
  deactivate(fx.store, id, [1]);
  const r = await hermes(["sessions", "export", id, ...home]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.equal(lines[0].type, "session");
  assert.equal(lines[0].id, id);
  assert.deepEqual(lines.slice(1).map((m) => [m.seq, m.role, m.active]), [
    [1, "user", false],
    [2, "assistant", true],
    [3, "tool", true],
    [4, "assistant", true],
  ]);
  assert.deepEqual(lines[2].tool_calls, [{
    id: "call_5",
    name: "shell",
    arguments: '{"command":"ci status 5"}',
  }]);
  assert.equal(lines[4].tool_calls[0].arguments, '{"url":"https://x/?token=[REDACTED:MY_API_KEY]"}');

  const file = `${fx.dir}/out.jsonl`;
  const toFile = await hermes(["sessions", "export", id, "-o", file, ...home]);
  assert.equal(toFile.code, 0, toFile.stderr);
  assert.equal(toFile.stdout, "");
  assert.equal(await Deno.readTextFile(file), r.stdout);
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);

  const md = await hermes(["sessions", "export", id, "--format", "md", ...home]);
  assert.match(md.stdout, new RegExp(`^# Session ${id}\n`));
  assert.match(md.stdout, /## 1 · user \[compacted\]/);

  const bad = await hermes(["sessions", "export", id, "--format", "csv", ...home]);
  assert.ok(isUserError(bad));
  assert.match(bad.stderr, /--format "csv": expected jsonl or md/);
});

Deno.test("sessions search: finds text in compacted rows, marks them, filters by job", async () => {
  const { fx, sessions, home } = await fixture();
  await using _ = fx;
  const id = sessions[7]!.id;
  await fx.store.appendMessages(id, [{
    role: "user",
    content: "the flaky integration suite timed out on arm64",
  }]);
  deactivate(fx.store, id, [4]);

  const text = await hermes(["sessions", "search", "flaky", "suite", ...home]);
  assert.equal(text.code, 0, text.stderr);
  assert.equal(
    text.stdout,
    `${id} #4 user [compacted]  the «flaky» integration «suite» timed out on arm64\n`,
  );

  const json = JSON.parse((await hermes(["sessions", "search", '"timed out"', "--json", ...home])).stdout);
  assert.equal(json.length, 1);
  assert.equal(json[0].session_id, id);
  assert.equal(json[0].active, false);

  const otherJob = sessions.find((s) => s.job !== sessions[7]!.job)!.job;
  const none = await hermes(["sessions", "search", "flaky", "--job", otherJob, "--json", ...home]);
  assert.equal(none.stdout, "[]\n");
  const limited = JSON.parse(
    (await hermes(["sessions", "search", "pipeline", "--limit", "4", "--json", ...home])).stdout,
  );
  assert.equal(limited.length, 4);

  assert.ok(isUserError(await hermes(["sessions", "search", ...home])));
  const badSort = await hermes(["sessions", "search", "x", "--sort", "best", ...home]);
  assert.ok(isUserError(badSort));
  assert.match(badSort.stderr, /--sort "best": expected newest or relevance/);
});

Deno.test("sessions: usage and unknown subcommands", async () => {
  const home = await Deno.makeTempDir();
  try {
    const bare = await hermes(["sessions", "--home", home]);
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /Usage: hermes sessions/);
    const help = await hermes(["sessions", "--help", "--home", home]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /prune --older-than 30d/);
    const unknown = await hermes(["sessions", "frobnicate", "--home", home]);
    assert.ok(isUserError(unknown));
    assert.match(unknown.stderr, /"sessions frobnicate".*list, show/);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
