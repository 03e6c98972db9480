/** Contract: appends, the active transcript, its fingerprint, size-only rows, the estimate input, concurrency. */
import assert from "node:assert/strict";
import type { StoredMessage } from "../../../runtime/core/types.ts";
import { compactRows, type OpenStore } from "./_testing.ts";

export function messageContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: messages append in order with tool calls and stay in prompt order`, async () => {
    await using fx = await open();
    const s = await fx.store.createSession({ job: "j" });
    const [user] = await fx.store.appendMessages(s.id, [{ role: "user", content: "hi" }]);
    const [assistant] = await fx.store.appendMessages(s.id, [{
      role: "assistant",
      content: "",
      tool_calls: [{ id: "c1", name: "shell", arguments: "{}" }],
      prompt_tokens: 10,
      completion_tokens: 2,
    }]);
    const [tool] = await fx.store.appendMessages(s.id, [{
      role: "tool",
      content: "ok",
      tool_call_id: "c1",
      name: "shell",
    }]);
    const messages = await fx.store.activeMessages(s.id);
    assert.deepEqual(messages.map((m) => [m.seq, m.role]), [[1, "user"], [2, "assistant"], [3, "tool"]]);
    assert.deepEqual(messages[1]!.tool_calls, [{ id: "c1", name: "shell", arguments: "{}" }]);
    assert.equal(messages[1]!.prompt_tokens, 10);
    assert.equal(messages[2]!.tool_call_id, "c1");
    assert.deepEqual(messages, [user, assistant, tool], "append returns the rows as they are stored");
    assert.deepEqual(await fx.store.activeMessages("other"), []);
  });

  Deno.test(`${name}: one append of several messages is one contiguous run of seqs`, async () => {
    await using fx = await open();
    const s = await fx.store.createSession({ job: "j" });
    const rows = await fx.store.appendMessages(s.id, [
      { role: "system", content: "sys" },
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
    ]);
    assert.deepEqual(rows.map((m) => [m.seq, m.pos, m.kind, m.active]), [
      [1, 1, "message", true],
      [2, 2, "message", true],
      [3, 3, "message", true],
    ]);
    const other = await fx.store.createSession({ job: "j" });
    assert.equal((await fx.store.appendMessages(other.id, [{ role: "user", content: "x" }]))[0]!.seq, 1);
  });

  Deno.test(`${name}: compacted rows leave the transcript, stay in allMessages, in prompt order`, async () => {
    await using fx = await open();
    const s = await fx.store.createSession({ job: "j" });
    const rows = await fx.store.appendMessages(
      s.id,
      ["a", "b", "c", "d"].map((content) => ({ role: "user", content })),
    );
    await compactRows(fx.store, s.id, [rows[1]!.id, rows[2]!.id], [
      { role: "user", content: "summary", kind: "summary", pos: rows[1]!.pos },
    ]);
    assert.deepEqual((await fx.store.activeMessages(s.id)).map((m) => m.content), ["a", "summary", "d"]);
    assert.deepEqual((await fx.store.allMessages(s.id)).map((m) => [m.content, m.active, m.kind]), [
      ["a", true, "message"],
      ["b", false, "message"],
      ["summary", true, "summary"],
      ["c", false, "message"],
      ["d", true, "message"],
    ]);
  });

  Deno.test(`${name}: messagePage pages through allMessages in prompt order; messageCount counts them`, async () => {
    await using fx = await open();
    const s = await fx.store.createSession({ job: "j" });
    const other = await fx.store.createSession({ job: "j" });
    await fx.store.appendMessages(other.id, [{ role: "user", content: "elsewhere" }]);
    const rows = await fx.store.appendMessages(
      s.id,
      ["a", "b", "c", "d", "e"].map((content) => ({ role: "user", content })),
    );
    await compactRows(fx.store, s.id, [rows[1]!.id, rows[2]!.id], [
      { role: "user", content: "summary", kind: "summary", pos: rows[1]!.pos },
    ]);
    const all = await fx.store.allMessages(s.id);
    assert.equal(await fx.store.messageCount(s.id), 6);
    assert.equal(await fx.store.messageCount(other.id), 1);
    for (const size of [1, 2, 4, 6, 100]) {
      const read: typeof all = [];
      let after: { pos: number; seq: number } | null = null;
      let calls = 0;
      while (true) {
        const page = await fx.store.messagePage(s.id, after, size);
        calls++;
        assert.ok(page.length <= size, `a page of ${page.length} rows at size ${size}`);
        read.push(...page);
        if (page.length < size) break;
        after = { pos: page.at(-1)!.pos, seq: page.at(-1)!.seq };
      }
      assert.deepEqual(read, all, `pages of ${size}`);
      assert.equal(calls, Math.floor(6 / size) + 1, `pages of ${size}`);
    }
    assert.deepEqual(await fx.store.messagePage("no-such-session", null, 10), []);
  });

  Deno.test(`${name}: toolOutputBytes sums the UTF-8 bytes of a session's tool rows, archived ones too`, async () => {
    await using fx = await open();
    const s = await fx.store.createSession({ job: "j" });
    const other = await fx.store.createSession({ job: "j" });
    assert.equal(await fx.store.toolOutputBytes(s.id), 0);
    await fx.store.appendMessages(other.id, [{ role: "tool", content: "elsewhere", tool_call_id: "c" }]);
    const rows = await fx.store.appendMessages(s.id, [
      { role: "user", content: "not a tool result" },
      { role: "tool", content: "héllo", tool_call_id: "c1", name: "shell" },
      { role: "tool", content: "x".repeat(1000), tool_call_id: "c2", name: "shell", active: false },
    ]);
    assert.equal(await fx.store.toolOutputBytes(s.id), 6 + 1000);
    await compactRows(fx.store, s.id, [rows[1]!.id], [
      { role: "user", content: "summary", kind: "summary", pos: rows[1]!.pos },
    ]);
    assert.equal(await fx.store.toolOutputBytes(s.id), 1006, "a compacted result is still stored");
  });

  Deno.test(`${name}: transcriptVersion changes on every append and compaction, not on reads`, async () => {
    await using fx = await open();
    const other = await fx.connect();
    const s = await fx.store.createSession({ job: "j" });
    const empty = await fx.store.transcriptVersion(s.id);
    const rows = await fx.store.appendMessages(s.id, [{ role: "user", content: "a" }, {
      role: "user",
      content: "b",
    }]);
    const two = await fx.store.transcriptVersion(s.id);
    assert.notEqual(two, empty);
    await fx.store.activeMessages(s.id);
    assert.equal(await fx.store.transcriptVersion(s.id), two);
    assert.equal(await other.transcriptVersion(s.id), two, "every connection sees the same fingerprint");
    await other.appendMessages(s.id, [{ role: "user", content: "c" }]);
    const three = await fx.store.transcriptVersion(s.id);
    assert.notEqual(three, two);
    await compactRows(fx.store, s.id, [rows[0]!.id]);
    assert.notEqual(await fx.store.transcriptVersion(s.id), three);
  });

  Deno.test(`${name}: transcriptRows are the active rows without content; messageContents cuts them`, async () => {
    await using fx = await open();
    const s = await fx.store.createSession({ job: "j" });
    const rows = await fx.store.appendMessages(s.id, [
      { role: "user", content: "hello there" },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "c1", name: "shell", arguments: '{"command":"ls"}' }],
        prompt_tokens: 7,
        completion_tokens: 3,
      },
      { role: "tool", content: "file list", tool_call_id: "c1", name: "shell" },
      { role: "user", content: "gone" },
    ]);
    await compactRows(fx.store, s.id, [rows[3]!.id]);
    const plan = await fx.store.transcriptRows(s.id);
    assert.deepEqual(plan, [
      {
        id: rows[0]!.id,
        seq: 1,
        pos: 1,
        role: "user",
        kind: "message",
        chars: 11,
        prompt_tokens: null,
        completion_tokens: null,
      },
      {
        id: rows[1]!.id,
        seq: 2,
        pos: 2,
        role: "assistant",
        kind: "message",
        chars: 0,
        tool_calls: [{ id: "c1", name: "shell", arguments: '{"command":"ls"}' }],
        prompt_tokens: 7,
        completion_tokens: 3,
      },
      {
        id: rows[2]!.id,
        seq: 3,
        pos: 3,
        role: "tool",
        kind: "message",
        chars: 9,
        tool_call_id: "c1",
        name: "shell",
        prompt_tokens: null,
        completion_tokens: null,
      },
    ]);
    const ids = rows.map((r) => r.id);
    assert.deepEqual(
      await fx.store.messageContents(ids, 4),
      new Map([[ids[0]!, "hell"], [ids[1]!, ""], [ids[2]!, "file"], [ids[3]!, "gone"]]),
    );
    assert.equal((await fx.store.messageContents([ids[0]!], null)).get(ids[0]!), "hello there");
    assert.deepEqual(await fx.store.messageContents([], null), new Map());
  });

  Deno.test(`${name}: estimateInput starts from the newest usable prompt_tokens reading`, async () => {
    await using fx = await open();
    const s = await fx.store.createSession({ job: "j" });
    const seqs = (rows: { seq: number }[]) => rows.map((r) => r.seq);
    await fx.store.appendMessages(s.id, [{ role: "system", content: "sys" }, {
      role: "user",
      content: "go",
    }]);
    let input = await fx.store.estimateInput(s.id);
    assert.equal(input.reading, null, "no reading yet");
    assert.deepEqual(seqs(input.after), [1, 2], "every active row");

    await fx.store.appendMessages(s.id, [
      {
        role: "assistant",
        content: "",
        prompt_tokens: 100,
        completion_tokens: 5,
        tool_calls: [{ id: "c", name: "t", arguments: "{}" }],
      },
      { role: "tool", content: "out", tool_call_id: "c", name: "t" },
      { role: "assistant", content: "no usage", prompt_tokens: null },
      { role: "user", content: "more" },
    ]);
    input = await fx.store.estimateInput(s.id);
    assert.equal(input.reading?.seq, 3);
    assert.equal(input.reading?.prompt_tokens, 100);
    assert.deepEqual(input.reading?.tool_calls, [{ id: "c", name: "t", arguments: "{}" }]);
    assert.deepEqual(seqs(input.after), [4, 5, 6], "the rows stored after the reading");
    assert.deepEqual(input.after.map((r) => r.chars), [3, 8, 4]);

    const rows = await fx.store.appendMessages(s.id, [
      { role: "assistant", content: "done", prompt_tokens: 150, completion_tokens: 2 },
    ]);
    input = await fx.store.estimateInput(s.id);
    assert.equal(input.reading?.seq, rows[0]!.seq);
    assert.deepEqual(input.after, []);

    const all = await fx.store.activeMessages(s.id);
    await compactRows(fx.store, s.id, [all[2]!.id, all[3]!.id], [
      { role: "user", content: "summary", kind: "summary", pos: all[2]!.pos },
    ]);
    input = await fx.store.estimateInput(s.id);
    assert.equal(input.reading, null, "a compaction stored after the reading makes it stale");
    assert.deepEqual(input.after.map((r) => r.kind === "summary" ? "summary" : r.seq), [
      1,
      2,
      "summary",
      5,
      6,
      7,
    ]);

    const [fresh] = await fx.store.appendMessages(s.id, [
      { role: "user", content: "again" },
      { role: "assistant", content: "ok", prompt_tokens: 90, completion_tokens: 1 },
      { role: "tool", content: "x", tool_call_id: "c", name: "t" },
    ]);
    input = await fx.store.estimateInput(s.id);
    assert.equal(input.reading?.seq, fresh!.seq + 1, "a reading after the compaction counts again");
    assert.deepEqual(seqs(input.after), [fresh!.seq + 2]);
  });

  Deno.test(`${name}: concurrent writers in four processes lose, duplicate and interleave nothing`, async (t) => {
    await using fx = await open();
    const appendFromProcess = fx.appendFromProcess?.bind(fx);
    if (!appendFromProcess) {
      await t.step({ name: "no other process can reach this store", ignore: true, fn: () => {} });
      return;
    }
    const s = await fx.store.createSession({ job: "j" });
    await Promise.all([0, 1, 2, 3].map((n) => appendFromProcess(s.id, 50, `w${n}`)));
    const messages = await fx.store.allMessages(s.id);
    assert.equal(messages.length, 200);
    assert.equal(new Set(messages.map((m) => m.content)).size, 200);
    assert.deepEqual(
      messages.map((m) => m.seq),
      messages.map((_, i) => i + 1),
      "seqs are 1..200 without gaps",
    );
    for (const n of [0, 1, 2, 3]) {
      const own = messages.filter((m: StoredMessage) => m.content.startsWith(`w${n} `));
      assert.deepEqual(
        own.map((m) => m.content),
        own.map((_, i) => `w${n} ${i + 1}`),
        "each writer's order is kept",
      );
    }
  });
}
