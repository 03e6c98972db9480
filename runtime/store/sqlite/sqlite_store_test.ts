import assert from "node:assert/strict";
import { type OpenStore, storeContract } from "../../../tests/contracts/store.ts";
import { migrations } from "../_migrations.ts";
import { sqliteHandle } from "./_testing.ts";
import { openSqliteStore } from "./sqlite_store.ts";

const APPENDER = new URL("./testdata/append_messages.ts", import.meta.url).pathname;

const fileStore: OpenStore = async (options = {}) => {
  const dir = await Deno.makeTempDir({ prefix: "hermes-store-" });
  const path = `${dir}/state.db`;
  const store = openSqliteStore(path, options);
  const others: ReturnType<typeof openSqliteStore>[] = [];
  return {
    store,
    connect: () => {
      const other = openSqliteStore(path, options);
      others.push(other);
      return Promise.resolve(other);
    },
    async appendFromProcess(sessionId, count, tag) {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", APPENDER, path, sessionId, String(count), tag],
        stdout: "null",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    },
    async [Symbol.asyncDispose]() {
      for (const other of others) await other.close();
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
};

const memoryStore: OpenStore = (options = {}) => {
  const store = openSqliteStore(":memory:", options);
  return Promise.resolve({
    store,
    connect: () => Promise.resolve(store),
    [Symbol.asyncDispose]: () => store.close(),
  });
};

storeContract("sqlite(file)", fileStore);
storeContract("sqlite(:memory:)", memoryStore);

Deno.test("sqlite: a new file is private (0600), WAL, and reopening does not re-migrate", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/state.db`;
  const first = openSqliteStore(path);
  const id = (await first.createSession({ job: "j" })).id;
  await first.close();
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
  const second = openSqliteStore(path);
  try {
    const { db } = sqliteHandle(second);
    assert.equal((db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode, "wal");
    assert.equal(
      (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version,
      migrations.length,
    );
    assert.equal((await second.getSession(id))!.job, "j");
    for (const suffix of ["-wal", "-shm"]) {
      assert.equal((await Deno.stat(path + suffix)).mode! & 0o777, 0o600, `${suffix} is private too`);
    }
  } finally {
    await second.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite: an existing store keeps its mode; a pre-existing empty file gets 0600 like a new one", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/state.db`;
  await Deno.writeFile(path, new Uint8Array(), { mode: 0o640 });
  await Deno.chmod(path, 0o640);
  const store = openSqliteStore(path);
  try {
    await store.createSession({ job: "j" });
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
  } finally {
    await store.close();
  }
  await Deno.chmod(path, 0o640);
  const again = openSqliteStore(path);
  try {
    await again.createSession({ job: "j" });
    assert.equal((await Deno.stat(path)).mode! & 0o777, 0o640, "the owner's choice for a store with data");
  } finally {
    await again.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sqlite: a throwing write transaction rolls back; operations reject instead of throwing", async () => {
  const store = openSqliteStore(":memory:");
  try {
    const s = await store.createSession({ job: "j" });
    const handle = sqliteHandle(store);
    assert.throws(() =>
      handle.immediate(() => {
        handle.stmt("INSERT INTO session_kv (session_id, key, value, updated_at) VALUES (?, 'k', '1', 0)")
          .run(s.id);
        throw new Error("boom");
      }), /boom/);
    assert.equal(await store.getState(s.id, "k"), undefined);
    const pending = store.appendMessages("no-such-session", [{ role: "user", content: "x" }]);
    assert.ok(pending instanceof Promise);
    await assert.rejects(pending, /FOREIGN KEY/);
  } finally {
    await store.close();
  }
});

Deno.test("sqlite: operations on a closed store reject", async () => {
  const store = openSqliteStore(":memory:");
  await store.close();
  await assert.rejects(store.getSession("x"));
  await store.close();
});
