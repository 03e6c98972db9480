import assert from "node:assert/strict";
import type { Role, ToolCall } from "../core/types.ts";
import { sqliteHandle } from "../store/sqlite/_testing.ts";
import { addSessions, deactivate, tempStore } from "./_testing.ts";
import { exportSession, type MessageLine, type SessionHeader } from "./export.ts";
import { toMessageRecord } from "./records.ts";

const text = async (chunks: AsyncIterable<string>) => (await Array.fromAsync(chunks)).join("");

/** A session with tool calls, a summary placed between kept rows, and rows replaced by compaction. */
async function compactedSession(fx: Awaited<ReturnType<typeof tempStore>>): Promise<string> {
  const [session] = await addSessions(fx, 1);
  const id = session!.id;
  fx.clock.at += 1000;
  await fx.store.appendMessages(id, [
    {
      role: "assistant",
      content: "Two checks at once.",
      tool_calls: [
        { id: "a", name: "shell", arguments: '{"command":"git status"}' },
        { id: "b", name: "read_file", arguments: '{"path":"README.md"}' },
      ],
    },
    { role: "tool", content: "clean", tool_call_id: "a", name: "shell" },
    { role: "tool", content: "# Readme\n```sh\nrun\n```", tool_call_id: "b", name: "read_file" },
    { role: "assistant", content: "All green.", prompt_tokens: 300, completion_tokens: 20 },
  ]);
  await fx.store.appendMessages(id, [{
    role: "user",
    content: "Summary: checked build 0.",
    kind: "summary",
  }]);
  sqliteHandle(fx.store).stmt("UPDATE messages SET pos = 1.5 WHERE session_id = ? AND seq = 8").run(id);
  deactivate(fx.store, id, [2, 3]);
  return id;
}

Deno.test("export jsonl round-trips every message, in order, with tool calls", async () => {
  await using fx = await tempStore();
  const id = await compactedSession(fx);
  const lines = (await text(exportSession(fx.store, id, { format: "jsonl" }))).trimEnd().split("\n").map((
    l,
  ) => JSON.parse(l));
  const header = lines[0] as SessionHeader;
  const messages = lines.slice(1) as MessageLine[];
  assert.equal(header.type, "session");
  assert.equal(header.id, id);
  assert.equal(header.message_count, 8);
  assert.deepEqual(messages.map((m) => m.seq), [1, 8, 2, 3, 4, 5, 6, 7]);

  const stored = await fx.store.allMessages(id);
  assert.deepEqual(
    messages,
    stored.map((m) => ({
      type: "message",
      seq: m.seq,
      pos: m.pos,
      role: m.role,
      kind: m.kind,
      active: m.active,
      content: m.content,
      tool_calls: m.tool_calls ?? null,
      tool_call_id: m.tool_call_id ?? null,
      name: m.name ?? null,
      prompt_tokens: m.prompt_tokens,
      completion_tokens: m.completion_tokens,
      created_at: new Date(m.created_at).toISOString(),
    })),
  );

  // Rebuild the session in a fresh store from the export alone: its export is the same, line for line.
  await using copy = await tempStore();
  const rebuilt = (await copy.store.createSession({ job: header.job })).id;
  for (const m of [...messages].sort((x, y) => x.seq - y.seq)) {
    copy.clock.at = Date.parse(m.created_at);
    await copy.store.appendMessages(rebuilt, [{
      role: m.role as Role,
      content: m.content,
      kind: m.kind,
      prompt_tokens: m.prompt_tokens,
      completion_tokens: m.completion_tokens,
      ...(m.tool_calls ? { tool_calls: m.tool_calls as ToolCall[] } : {}),
      ...(m.tool_call_id !== null ? { tool_call_id: m.tool_call_id } : {}),
      ...(m.name !== null ? { name: m.name } : {}),
    }]);
    sqliteHandle(copy.store).stmt("UPDATE messages SET pos = ?, active = ? WHERE session_id = ? AND seq = ?")
      .run(m.pos, m.active ? 1 : 0, rebuilt, m.seq);
  }
  const again = (await text(exportSession(copy.store, rebuilt, { format: "jsonl" }))).trimEnd().split("\n")
    .slice(1);
  assert.deepEqual(again.map((l) => JSON.parse(l)), messages);
});

Deno.test("export md marks summaries and compacted rows and fences content safely", async () => {
  await using fx = await tempStore();
  const id = await compactedSession(fx);
  const md = await text(exportSession(fx.store, id, { format: "md" }));
  assert.match(md, /^# Session /);
  assert.match(md, /## 8 · user \[summary\]\n/);
  assert.match(md, /## 2 · assistant \[compacted\]\n/);
  assert.match(md, /## 6 · tool `read_file` \(b\)\n\n````\n# Readme\n```sh\nrun\n```\n````\n/);
  assert.match(md, /\*\*tool call\*\* `shell` \(a\)\n\n```json\n\{\n {2}"command": "git status"\n\}\n```/);
  assert.ok(md.indexOf("## 8 ·") < md.indexOf("## 2 ·"), "prompt order");
});

Deno.test("export reads the store a page at a time and yields the same lines as the whole session", async () => {
  await using fx = await tempStore();
  const id = await compactedSession(fx);
  // 150 rows of 64 KiB (10 MB): more than two pages of the default size.
  const big = (i: number) => `${i}:` + "x".repeat(64 * 1024);
  for (let i = 0; i < 150; i += 10) {
    await fx.store.appendMessages(
      id,
      Array.from(
        { length: 10 },
        (_, j) => ({ role: "tool" as const, content: big(i + j), tool_call_id: "a" }),
      ),
    );
  }
  const all = await fx.store.allMessages(id);
  const expected = all.map((m) => JSON.stringify({ type: "message", ...toMessageRecord(m) }));
  // Observe the real store's reads: which operations, and how many rows each page returned.
  const pages: number[] = [];
  const reads: string[] = [];
  const observed = new Proxy(fx.store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        reads.push(String(key));
        const out = value.apply(target, args);
        if (key === "messagePage") {
          return (out as Promise<unknown[]>).then((rows) => (pages.push(rows.length), rows));
        }
        return out;
      };
    },
  });
  const lines = (await text(exportSession(observed, id, { format: "jsonl" }))).trimEnd().split("\n");
  assert.equal((JSON.parse(lines[0]!) as SessionHeader).message_count, 158);
  assert.deepEqual(lines.slice(1), expected);
  assert.ok(!reads.includes("allMessages"), reads.join(", "));
  assert.deepEqual(pages, [64, 64, 30]);
  // A page size that divides the rows exactly ends on an empty page.
  pages.length = 0;
  const md = await text(exportSession(observed, id, { format: "md", pageSize: 79 }));
  assert.deepEqual(pages, [79, 79, 0]);
  assert.equal(md.split("\n## ").length - 1, 158);
});
