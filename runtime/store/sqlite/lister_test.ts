import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openSqliteStore } from "./sqlite_store.ts";
import { openSqliteLister } from "./lister.ts";

async function storeWith(sessions: number): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-lister-" });
  const store = openSqliteStore(`${dir}/state.db`);
  for (let i = 0; i < sessions; i++) {
    const { id } = await store.createSession({ job: `job-${i % 3}` });
    if (i % 2) await store.updateSession(id, { status: "success", terminal_reason: "completed" });
  }
  await store.close();
  return `${dir}/state.db`;
}

Deno.test("the lister reads what the store lists, with the same filters, without opening the store", async () => {
  const path = await storeWith(7);
  const store = openSqliteStore(path);
  const lister = openSqliteLister(path);
  assert.ok(lister, "a store at the current schema is read by the lister");
  for (const options of [{}, { limit: 3 }, { job: "job-1" }, { status: "success" }, { archived: true }]) {
    assert.deepEqual(
      lister.listSessionsJson(options),
      await store.listSessionsJson(options),
      JSON.stringify(options),
    );
  }
  assert.equal(lister.listSessionsJson({ limit: 3 }).length, 3);
  lister.close();
  await store.close();
  await Deno.remove(path.replace(/\/state\.db$/, ""), { recursive: true });
});

Deno.test("the lister declines a missing file and a store at another schema version: the full store answers", async () => {
  const dir = await Deno.makeTempDir({ prefix: "hermes-lister-" });
  assert.equal(openSqliteLister(`${dir}/none.db`), undefined);
  await Deno.stat(`${dir}/none.db`).then(() => assert.fail("the lister created a file"), () => {});
  const path = await storeWith(1);
  const db = new DatabaseSync(path);
  const { user_version } = db.prepare("PRAGMA user_version").get() as { user_version: number };
  db.exec(`PRAGMA user_version = ${user_version - 1}`); // as if one migration were still to run
  db.close();
  assert.equal(openSqliteLister(path), undefined);
  await Deno.remove(dir, { recursive: true });
  await Deno.remove(path.replace(/\/state\.db$/, ""), { recursive: true });
});
