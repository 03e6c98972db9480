/** Compaction across real processes sharing one store: concurrent appends and SIGKILL at awkward moments. */
import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import type { Store } from "../store/store.ts";
import { openSqliteStore } from "../store/sqlite/sqlite_store.ts";
import type { StoredMessage } from "../core/types.ts";
import {
  APPENDER,
  compactorFor,
  type Fixture,
  fixture,
  linesOf,
  orphanProblems,
  scriptedModel,
  SHORT_SUMMARY,
  TESTDATA,
  transcript,
  waitForLine,
} from "./_testing.ts";
import { sqliteHandle } from "../store/sqlite/_testing.ts";
import { currentProcess } from "../core/process_identity.ts";

function deno(script: string, args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${TESTDATA}${script}`, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
}

Deno.test("two processes: B appends while A summarises; B's messages follow the summary, nothing is lost", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  const before = await fx.store.activeMessages(fx.sessionId);
  const called = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const model = scriptedModel(async () => {
    called.resolve();
    await release.promise;
    return SHORT_SUMMARY;
  });
  // A tail budget that holds protect_last's 20 messages, so the tail is exactly those.
  const compactor = compactorFor(fx, { provider: model, config: { tail_budget: 0.5 } });
  const pending = compactor.beforeModelCall(fx.sessionId, {});
  await called.promise;

  const b = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", APPENDER, fx.path, fx.sessionId, "5"],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const { code, stdout } = await b.output();
  assert.equal(code, 0);
  assert.equal(new TextDecoder().decode(stdout).trim(), "done", "B was not blocked by A's lease");
  release.resolve();
  const outcome = await pending;
  assert.equal(outcome?.changed, true);

  const after = await fx.store.activeMessages(fx.sessionId);
  const fromB = after.slice(-5);
  assert.deepEqual(fromB.map((m) => m.content), [1, 2, 3, 4, 5].map((i) => `from B ${i}`));
  assert.equal(after[4]!.kind, "summary");
  assert.deepEqual(after.slice(0, 4).map((m) => m.id), before.slice(0, 4).map((m) => m.id));
  assert.deepEqual(after.slice(5, -5).map((m) => m.id), before.slice(-20).map((m) => m.id));
  const all = await fx.store.allMessages(fx.sessionId);
  assert.equal(new Set(all.map((m) => m.seq)).size, all.length, "no seq is duplicated");
  const key = (m: StoredMessage) => JSON.stringify([m.role, m.content, m.tool_calls, m.tool_call_id]);
  assert.equal(new Set(all.map(key)).size, all.length, "no message is duplicated");
  const archived = all.filter((m) => !m.active);
  assert.deepEqual(
    archived.map((m) => m.id),
    before.slice(4, -20).map((m) => m.id),
    "A's replaced rows are kept",
  );
  assert.deepEqual(orphanProblems(after), []);
});

Deno.test("two processes: B appends while A folds a micro pass; B's messages follow, every user message stays", async () => {
  const clock = new ManualClock();
  await using fx = await fixture(clock);
  await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
  const before = await fx.store.activeMessages(fx.sessionId);
  const called = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const model = scriptedModel(async () => {
    called.resolve();
    await release.promise;
    return SHORT_SUMMARY;
  });
  const pending = compactorFor(fx, {
    provider: model,
    config: { micro: { enabled: true, threshold: 0.5, payback: 1000 } },
  })
    .afterTurn(fx.sessionId, {});
  await called.promise;
  const b = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", APPENDER, fx.path, fx.sessionId, "5"],
    stdin: "null",
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  assert.equal((await b.status).code, 0);
  release.resolve();
  assert.equal((await pending)?.outcome, "committed");
  const after = await fx.store.activeMessages(fx.sessionId);
  assert.deepEqual(after.slice(-5).map((m) => m.content), [1, 2, 3, 4, 5].map((i) => `from B ${i}`));
  const users = (ms: StoredMessage[]) => ms.filter((m) => m.role === "user").map((m) => m.id);
  assert.deepEqual(users(after.slice(0, -5)), users(before));
  assert.equal(after.filter((m) => m.kind === "summary").length, 1);
  const all = await fx.store.allMessages(fx.sessionId);
  assert.equal(new Set(all.map((m) => m.seq)).size, all.length, "no seq is duplicated");
});

/** The transcript as a comparable value: every row with its active flag. */
async function snapshot(
  store: Store,
  sessionId: string,
): Promise<Pick<StoredMessage, "id" | "active" | "content" | "pos">[]> {
  return (await store.allMessages(sessionId)).map(({ id, active, content, pos }) => ({
    id,
    active,
    content,
    pos,
  }));
}

type PassKind = "hard" | "micro";
const PASSES: readonly PassKind[] = ["hard", "micro"];

async function killAt(
  fxPath: string,
  sessionId: string,
  mode: string,
  marker: string,
  pass: PassKind,
): Promise<number> {
  const child = deno("compact_session.ts", [fxPath, sessionId, mode, pass]);
  const lines = linesOf(child.stdout);
  try {
    await waitForLine(lines, (line) => line === marker);
    child.kill("SIGKILL");
  } finally {
    while (!(await lines.next()).done) { /* drain */ }
  }
  const status = await child.status;
  assert.equal(status.signal, "SIGKILL");
  return child.pid;
}

function integrityOk(store: Store): void {
  assert.equal(
    (sqliteHandle(store).db.prepare("PRAGMA integrity_check").get() as { integrity_check: string })
      .integrity_check,
    "ok",
  );
}

const logCount = (store: Store) =>
  (sqliteHandle(store).db.prepare("SELECT count(*) AS n FROM compaction_log").get() as { n: number }).n;

for (const pass of PASSES) {
  const retry = (store: Store, fx: Fixture) => {
    const compactor = compactorFor({ ...fx, store }, {
      provider: scriptedModel(),
      config: { micro: { enabled: true, threshold: 0.5, payback: 1000 } },
    });
    return pass === "micro" ? compactor.afterTurn(fx.sessionId, {}) : compactor.compact(fx.sessionId, {});
  };

  Deno.test(`SIGKILL before the summary returns (${pass}): transcript unchanged, lease reclaimed by the next run`, async () => {
    const clock = new ManualClock();
    await using fx = await fixture(clock);
    await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
    const before = await snapshot(fx.store, fx.sessionId);
    const pid = await killAt(fx.path, fx.sessionId, "hang", "summarising", pass);

    const reopened = openSqliteStore(fx.path, { clock });
    try {
      integrityOk(reopened);
      assert.deepEqual(await snapshot(reopened, fx.sessionId), before);
      assert.equal(
        (await reopened.readLease(fx.sessionId))?.holder.pid,
        pid,
        "the dead holder's lease is still there",
      );
      const outcome = await retry(reopened, fx);
      assert.equal(outcome?.changed, true, "the next run takes the dead holder's lease over");
      assert.equal(await reopened.readLease(fx.sessionId), undefined);
    } finally {
      await reopened.close();
    }
  });

  Deno.test(`SIGKILL inside the commit transaction (${pass}): transcript wholly before, lease reclaimable`, async () => {
    const clock = new ManualClock();
    await using fx = await fixture(clock);
    await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
    const before = await snapshot(fx.store, fx.sessionId);
    const pid = await killAt(fx.path, fx.sessionId, "pause-commit", "in-commit", pass);

    const reopened = openSqliteStore(fx.path, { clock });
    try {
      integrityOk(reopened);
      assert.deepEqual(await snapshot(reopened, fx.sessionId), before);
      assert.equal(logCount(reopened), 0, "no log row of the half-done commit");
      assert.equal((await reopened.readLease(fx.sessionId))?.holder.pid, pid);
      const taken = await reopened.acquireLease({
        sessionId: fx.sessionId,
        holder: currentProcess(),
        now: clock.now(),
        ttlMs: 60_000,
      });
      assert.equal(taken.acquired && taken.took_over, "dead_holder");
    } finally {
      await reopened.close();
    }
  });

  Deno.test(`SIGKILL after the commit, while releasing the lease (${pass}): transcript wholly after, lease reclaimable`, async () => {
    const clock = new ManualClock();
    await using fx = await fixture(clock);
    await fx.store.appendMessages(fx.sessionId, transcript(20, { textChars: 600 }));
    const before = await fx.store.activeMessages(fx.sessionId);
    const pid = await killAt(fx.path, fx.sessionId, "pause-release", "in-release", pass);

    const reopened = openSqliteStore(fx.path, { clock });
    try {
      const active = await reopened.activeMessages(fx.sessionId);
      const archived = (await reopened.allMessages(fx.sessionId)).filter((m) => !m.active);
      if (pass === "hard") {
        assert.deepEqual(active.map((m) => m.kind === "summary" ? "summary" : m.id), [
          ...before.slice(0, 4).map((m) => m.id),
          "summary",
          ...before.slice(-20).map((m) => m.id),
        ]);
        assert.equal(archived.length, before.length - 24);
      } else {
        assert.equal(active.filter((m) => m.kind === "summary").length, 1);
        const userIds = (ms: StoredMessage[]) => ms.filter((m) => m.role === "user").map((m) => m.id);
        assert.deepEqual(userIds(active), userIds(before), "every user message stays");
        assert.ok(archived.length > 0 && archived.every((m) => m.role !== "user"));
        assert.deepEqual(
          active.filter((m) => m.kind !== "summary").map((m) => m.id),
          before.filter((m) => !archived.some((a) => a.id === m.id)).map((m) => m.id),
          "the kept rows, in order",
        );
      }
      assert.deepEqual(orphanProblems(active), []);
      assert.equal(logCount(reopened), 1);
      assert.equal((await reopened.readLease(fx.sessionId))?.holder.pid, pid);
      const taken = await reopened.acquireLease({
        sessionId: fx.sessionId,
        holder: currentProcess(),
        now: clock.now(),
        ttlMs: 60_000,
      });
      assert.equal(taken.acquired && taken.took_over, "dead_holder");
    } finally {
      await reopened.close();
    }
  });
}
