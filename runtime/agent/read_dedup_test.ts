import assert from "node:assert/strict";
import type { StoredMessage } from "../core/types.ts";
import { readKey, unchangedNote, unchangedRead } from "./read_dedup.ts";

const DIR = "/job";
let seq = 0;

function row(m: Partial<StoredMessage> & Pick<StoredMessage, "role">): StoredMessage {
  seq++;
  return {
    id: seq,
    session_id: "s",
    seq,
    pos: seq,
    kind: "message",
    active: true,
    prompt_tokens: null,
    completion_tokens: null,
    created_at: 0,
    content: "",
    ...m,
  };
}

function read(id: string, path: string, content: string, kind: StoredMessage["kind"] = "message") {
  return [
    row({ role: "assistant", tool_calls: [{ id, name: "read_file", arguments: JSON.stringify({ path }) }] }),
    row({ role: "tool", name: "read_file", tool_call_id: id, content, kind }),
  ];
}

Deno.test("read dedup: the same path with the same content points at the earlier result", () => {
  const active = [row({ role: "user", content: "go" }), ...read("c1", "notes/a.txt", "alpha")];
  const key = readKey({ path: "./notes/../notes/a.txt" }, DIR)!;
  assert.deepEqual(unchangedRead(active, key, "alpha", DIR), { seq: active[2]!.seq, tool_call_id: "c1" });
  assert.match(
    unchangedNote("a.txt", { seq: 7, tool_call_id: "c1" }),
    /^unchanged since message #7: a\.txt .* c1/,
  );
});

Deno.test("read dedup: a changed file, another path or no earlier read is read in full", () => {
  const active = read("c1", "a.txt", "alpha");
  assert.equal(unchangedRead(active, readKey({ path: "a.txt" }, DIR)!, "alpha, edited", DIR), null);
  assert.equal(unchangedRead(active, readKey({ path: "b.txt" }, DIR)!, "alpha", DIR), null);
  assert.equal(unchangedRead([], readKey({ path: "a.txt" }, DIR)!, "alpha", DIR), null);
  assert.equal(readKey({}, DIR), null);
});

Deno.test("read dedup: only the latest full result counts; notes are skipped, placeholders reset it", () => {
  const key = readKey({ path: "a.txt" }, DIR)!;
  const first = read("c1", "a.txt", "alpha");
  const note = read("c2", "a.txt", unchangedNote("a.txt", { seq: first[1]!.seq, tool_call_id: "c1" }));
  assert.equal(unchangedRead([...first, ...note], key, "alpha", DIR)?.tool_call_id, "c1");
  // The file changed, then changed back: the latest reading (beta) is what the model knows now.
  const back = [...first, ...read("c3", "a.txt", "beta")];
  assert.equal(unchangedRead(back, key, "alpha", DIR), null);
  assert.equal(unchangedRead(back, key, "beta", DIR)?.tool_call_id, "c3");
  // Compaction pruned the result: it is no longer verbatim, so the file is read again.
  assert.equal(unchangedRead(read("c4", "a.txt", "alpha", "pruned"), key, "alpha", DIR), null);
});
