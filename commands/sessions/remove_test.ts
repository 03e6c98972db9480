/** `hermes sessions delete|archive|unarchive` through the real CLI on a real store. */
import assert from "node:assert/strict";
import { sqliteHandle } from "../../runtime/store/sqlite/_testing.ts";
import { currentProcess } from "../../runtime/core/process_identity.ts";
import { addSessions, count, tempStore } from "../../runtime/session_admin/_testing.ts";
import { hermes, isUserError } from "./_testing.ts";

Deno.test("sessions delete: all or none, names unknown ids, a repeated delete is not found", async () => {
  await using fx = await tempStore();
  const [a, b, c] = await addSessions(fx, 3);
  const home = ["--home", fx.dir];

  const mixed = await hermes(["sessions", "delete", a!.id, "nope-1", b!.id, "nope-2", ...home]);
  assert.ok(isUserError(mixed), mixed.stderr);
  assert.match(mixed.stderr, /unknown session id "nope-1", unknown session id "nope-2"; nothing was changed/);
  assert.equal(count(fx.store, "SELECT count(*) FROM sessions"), 3);

  const ok = await hermes(["sessions", "delete", a!.id, b!.id, ...home]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, `${a!.id}\n${b!.id}\n`);
  assert.match(ok.stderr, /deleted 2 sessions/);
  assert.equal(count(fx.store, "SELECT count(*) FROM sessions"), 1);
  assert.equal(count(fx.store, "SELECT count(*) FROM messages WHERE session_id IN (?, ?)", a!.id, b!.id), 0);

  const again = await hermes(["sessions", "delete", a!.id, ...home]);
  assert.ok(isUserError(again), again.stderr);
  assert.match(again.stderr, new RegExp(`unknown session id "${a!.id}"`));

  const json = await hermes(["sessions", "delete", c!.id.slice(0, 18), "--json", "--quiet", ...home]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), { deleted_ids: [c!.id] });
  assert.equal(json.stderr, "");

  assert.ok(isUserError(await hermes(["sessions", "delete", ...home])));
});

Deno.test("sessions delete refuses a session running in another process unless --force", async () => {
  await using fx = await tempStore();
  const [running, idle] = await addSessions(fx, 2);
  // This test process is alive and is not the CLI process: it plays the run that owns the session.
  const me = currentProcess();
  sqliteHandle(fx.store).stmt(
    "UPDATE sessions SET status = 'running', owner_host = ?, owner_pid = ?, owner_started = ? WHERE id = ?",
  )
    .run(me.host, me.pid, me.started, running!.id);

  const refused = await hermes(["sessions", "delete", idle!.id, running!.id, "--home", fx.dir]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, new RegExp(`${running!.id} \\(running in pid ${me.pid} on .*--force`));
  assert.equal(count(fx.store, "SELECT count(*) FROM sessions"), 2, "nothing deleted");

  const archiveRefused = await hermes(["sessions", "archive", running!.id, "--home", fx.dir]);
  assert.equal(archiveRefused.code, 1);

  const forced = await hermes(["sessions", "delete", idle!.id, running!.id, "--force", "--home", fx.dir]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal(count(fx.store, "SELECT count(*) FROM sessions"), 0);
});

Deno.test("sessions archive hides from list and keeps everything; unarchive brings it back", async () => {
  await using fx = await tempStore();
  const [a, b] = await addSessions(fx, 2);
  const home = ["--home", fx.dir];
  const listed = async (...flags: string[]) =>
    JSON.parse((await hermes(["sessions", "list", ...flags, ...home])).stdout).map((s: { id: string }) =>
      s.id
    );

  const archived = await hermes(["sessions", "archive", a!.id, ...home]);
  assert.equal(archived.code, 0, archived.stderr);
  assert.equal(archived.stdout, `${a!.id}\n`);
  assert.deepEqual(await listed(), [b!.id]);
  assert.deepEqual(await listed("--archived"), [a!.id]);
  assert.equal(count(fx.store, "SELECT count(*) FROM messages WHERE session_id = ?", a!.id), 3);

  const again = await hermes(["sessions", "archive", a!.id, b!.id, "--json", ...home]);
  assert.deepEqual(JSON.parse(again.stdout), { archived_ids: [b!.id], already_archived_ids: [a!.id] });
  assert.match(again.stderr, /archived 1 session; already archived: /);

  const back = await hermes(["sessions", "unarchive", a!.id, ...home]);
  assert.equal(back.code, 0, back.stderr);
  assert.deepEqual(await listed(), [a!.id]);
  assert.ok(
    isUserError(await hermes(["sessions", "unarchive", a!.id, "--force", ...home])),
    "no --force there",
  );
});
