import assert from "node:assert/strict";
import { storeContract } from "../../tests/store_contract.ts";
import { Store } from "./store.ts";

storeContract("Store(file)", async () => Store.open(`${await Deno.makeTempDir()}/state.db`));
storeContract("Store(:memory:)", () => Promise.resolve(Store.open(":memory:")));

Deno.test("Store: a new file is private (0600), WAL, and reopening does not re-migrate", async () => {
  const path = `${await Deno.makeTempDir()}/state.db`;
  const first = Store.open(path);
  const id = first.createSession({ job: "j" }).id;
  first.close();
  assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
  const second = Store.open(path);
  try {
    assert.equal(
      (second.db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode,
      "wal",
    );
    assert.equal(second.getSession(id)!.job, "j");
  } finally {
    second.close();
  }
});

Deno.test("Store: four processes appending to one session lose and duplicate nothing", async () => {
  const path = `${await Deno.makeTempDir()}/state.db`;
  const store = Store.open(path);
  const id = store.createSession({ job: "j" }).id;
  const script = `
    import { Store } from "${new URL("./store.ts", import.meta.url).href}";
    const store = Store.open(Deno.args[0]);
    for (let i = 0; i < 50; i++) store.appendMessages(Deno.args[1], [{ role: "user", content: Deno.args[2] + ":" + i }]);
    store.close();`;
  const children = [0, 1, 2, 3].map((n) =>
    new Deno.Command(Deno.execPath(), {
      args: ["eval", script, path, id, `w${n}`],
      stdout: "null",
      stderr: "piped",
    })
      .output()
  );
  for (const out of await Promise.all(children)) {
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  }
  try {
    const messages = store.allMessages(id);
    assert.equal(messages.length, 200);
    assert.equal(new Set(messages.map((m) => m.content)).size, 200);
    assert.deepEqual(messages.map((m) => m.seq), messages.map((_, i) => i + 1));
  } finally {
    store.close();
  }
});
