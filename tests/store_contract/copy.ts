/** Contract: what the store holds (`store info`), and whole sessions exported and imported verbatim. */
import assert from "node:assert/strict";
import type { SessionExport } from "../../runtime/store/store.ts";
import { compactRows, type OpenStore } from "./_fixture.ts";

/** An export without the ids the receiving store numbers itself. */
function comparable(data: SessionExport) {
  return {
    ...data,
    messages: data.messages.map(({ id: _id, ...m }) => m),
    compactions: data.compactions.map(({ id: _id, ...c }) => c),
  };
}

export function copyContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: store info names the backend and schema version, and counts rows`, async () => {
    await using fx = await open();
    const empty = await fx.store.storeInfo();
    assert.ok(empty.schema_version >= 1);
    assert.deepEqual(Object.values(empty.counts), [0, 0, 0, 0, 0, 0]);
    const s = await fx.store.createSession({ job: "j" });
    await fx.store.appendMessages(s.id, [{ role: "user", content: "a" }, {
      role: "assistant",
      content: "b",
    }]);
    await fx.store.setState(s.id, "loop", { tick: 1 });
    await fx.store.setPluginState("p", "k", 1);
    const info = await fx.store.storeInfo();
    assert.equal(info.backend, empty.backend);
    assert.deepEqual(info.counts, {
      sessions: 1,
      messages: 2,
      session_state: 1,
      compaction_log: 0,
      schedule_runs: 0,
      plugin_state: 1,
    });
  });

  Deno.test(`${name}: a session exported and imported is the same, compacted rows included; once only`, async () => {
    await using source = await open();
    await using target = await open();
    const a = source.store;
    const s = await a.createSession({ job: "copy", model: "m" });
    const rows = await a.appendMessages(s.id, [
      { role: "user", content: "one" },
      { role: "assistant", content: "two", tool_calls: [{ id: "c1", name: "shell", arguments: "{}" }] },
      { role: "tool", content: "three", tool_call_id: "c1", name: "shell" },
    ]);
    await compactRows(a, s.id, [rows[0]!.id, rows[1]!.id], [{
      role: "user",
      content: "summary",
      kind: "summary",
      pos: rows[0]!.pos,
    }]);
    await a.setState(s.id, "loop", { tick: 4 });
    await a.updateSession(s.id, { status: "success", archived_at: 5 });
    const data = (await a.exportSession(s.id))!;
    assert.deepEqual(data.messages.map((m) => [m.seq, m.content, m.active]), [
      [1, "one", false],
      [2, "two", false],
      [3, "three", true],
      [4, "summary", true],
    ]);
    assert.equal(data.compactions.length, 1);
    assert.equal(await a.exportSession("missing"), undefined);

    const b = target.store;
    assert.equal(await b.importSession(data), true);
    assert.equal(await b.importSession(data), false, "a second import writes nothing");
    assert.deepEqual(comparable((await b.exportSession(s.id))!), comparable(data));
    assert.deepEqual(await b.sessionIds(), [s.id]);
    assert.deepEqual(
      (await b.activeMessages(s.id)).map((m) => m.content),
      (await a.activeMessages(s.id)).map((m) => m.content),
    );
    const [next] = await b.appendMessages(s.id, [{ role: "user", content: "five" }]);
    assert.equal(next!.seq, 5, "the next append follows the highest copied seq");
    assert.equal((await b.storeInfo()).counts.messages, 5);
  });
}
