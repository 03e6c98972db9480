import assert from "node:assert/strict";
import { ManualClock } from "../core/_testing.ts";
import { noteTarget, unchangedNote } from "../agent/read_dedup.ts";
import type { StoredMessage } from "../core/types.ts";
import type { AppendMessage } from "../store/store.ts";
import {
  compactorFor,
  type Fixture,
  fixture,
  orphanProblems,
  scriptedModel,
  transcript,
} from "./_testing.ts";
import { orphanedNote } from "./read_notes.ts";

/** Two rounds, a read of a.log (`chars` of content), ten shell rounds, then a repeated read answered by a note, then two more. */
async function session(fx: Fixture, chars: number) {
  const read = (id: string): AppendMessage => ({
    role: "assistant",
    content: "",
    tool_calls: [{ id, name: "read_file", arguments: '{"path":"a.log"}' }],
  });
  const first = await fx.store.appendMessages(fx.sessionId, [
    ...transcript(2, { toolChars: 100 }),
    read("r1"),
    { role: "tool", tool_call_id: "r1", name: "read_file", content: "a.log ".padEnd(chars, "z") },
    { role: "assistant", content: "read it" },
    { role: "user", content: "go on" },
    ...transcript(10, { toolChars: 2000 }).slice(2),
  ]);
  const original = first.find((m) => m.tool_call_id === "r1")!;
  const note = unchangedNote("a.log", { seq: original.seq, tool_call_id: "r1" });
  await fx.store.appendMessages(fx.sessionId, [
    read("r2"),
    { role: "tool", tool_call_id: "r2", name: "read_file", content: note },
    { role: "assistant", content: "same as before" },
    { role: "user", content: "and now?" },
    ...transcript(2, { toolChars: 100 }).slice(2),
  ]);
  return original;
}

const noteOf = (active: StoredMessage[]) => active.find((m) => m.tool_call_id === "r2")!;
const isActive = (active: StoredMessage[], seq: number) =>
  active.some((m) => m.seq === seq && m.kind === "message");

Deno.test("read notes: a pass that prunes the original read replaces the notes pointing at it", async () => {
  await using fx = await fixture(new ManualClock());
  const original = await session(fx, 4000);
  const outcome = await compactorFor(fx, { provider: scriptedModel(), context_window: 8000 }).beforeModelCall(
    fx.sessionId,
    {},
  );
  assert.equal(outcome?.kind, "prune_tool_results");
  const active = await fx.store.activeMessages(fx.sessionId);
  assert.ok(!isActive(active, original.seq), "the original read was pruned");
  const note = noteOf(active);
  assert.equal(note.kind, "pruned");
  assert.equal(note.content, orphanedNote(original.seq, fx.sessionId));
  assert.equal(noteTarget(note.content), null, "no note points at an archived result");
  // The note is archived, not lost, and the transcript stays valid.
  const all = await fx.store.allMessages(fx.sessionId);
  assert.ok(all.some((m) => !m.active && m.tool_call_id === "r2" && noteTarget(m.content) === original.seq));
  assert.deepEqual(orphanProblems(active), []);
  const [log] = await fx.store.compactionLog(fx.sessionId);
  assert.equal(log!.detail.notes_followed, 1);
});

Deno.test("read notes: a note whose original stays verbatim is left as it is", async () => {
  await using fx = await fixture(new ManualClock());
  // A result this small is not worth a placeholder: the prune keeps it, and the note stays true.
  const original = await session(fx, 200);
  const outcome = await compactorFor(fx, { provider: scriptedModel(), context_window: 8000 }).beforeModelCall(
    fx.sessionId,
    {},
  );
  assert.equal(outcome?.kind, "prune_tool_results");
  const active = await fx.store.activeMessages(fx.sessionId);
  assert.ok(isActive(active, original.seq));
  assert.equal(noteTarget(noteOf(active).content), original.seq);
  assert.equal(noteOf(active).kind, "message");
  const [log] = await fx.store.compactionLog(fx.sessionId);
  assert.equal(log!.detail.notes_followed, undefined);
});

Deno.test("read notes: a summary that absorbs the original replaces the notes in the tail", async () => {
  await using fx = await fixture(new ManualClock());
  const original = await session(fx, 200);
  const outcome = await compactorFor(fx, { provider: scriptedModel(), config: { protect_last: 12 } })
    .compact(fx.sessionId, {});
  assert.equal(outcome.kind, "summarize");
  const active = await fx.store.activeMessages(fx.sessionId);
  assert.ok(!isActive(active, original.seq), "the original read was summarised");
  assert.equal(noteOf(active).content, orphanedNote(original.seq, fx.sessionId));
  assert.deepEqual(orphanProblems(active), []);
});
