/** Behaviour every store location must show (a file, `:memory:`). */
import assert from "node:assert/strict";
import { NotFoundError } from "../runtime/core/errors.ts";
import type { Store } from "../runtime/store/store.ts";

export function storeContract(name: string, open: () => Promise<Store>): void {
  const withStore = (fn: (store: Store) => void | Promise<void>) => async () => {
    const store = await open();
    try {
      await fn(store);
    } finally {
      store.close();
    }
  };

  Deno.test(
    `${name}: sessions are created, listed newest first, updated and resolved`,
    withStore((store) => {
      const a = store.createSession({ job: "a" });
      const b = store.createSession({ job: "b", parent_id: a.id });
      assert.equal(a.status, "running");
      assert.deepEqual(store.listSessions().map((s) => s.id), [b.id, a.id]);
      assert.deepEqual(store.listSessions({ job: "a" }).map((s) => s.id), [a.id]);
      assert.deepEqual(store.listSessions({ limit: 1 }).map((s) => s.id), [b.id]);
      store.updateSession(a.id, { status: "success", terminal_reason: "completed" });
      assert.equal(store.getSession(a.id)!.terminal_reason, "completed");
      assert.equal(store.resolveSessionId("latest"), b.id);
      assert.equal(store.resolveSessionId(a.id), a.id);
      assert.throws(() => store.resolveSessionId("nope"), NotFoundError);
    }),
  );

  Deno.test(
    `${name}: messages append in order with tool calls and stay in prompt order`,
    withStore((store) => {
      const s = store.createSession({ job: "j" });
      store.appendMessages(s.id, [{ role: "user", content: "hi" }]);
      const [assistant] = store.appendMessages(s.id, [{
        role: "assistant",
        content: "",
        tool_calls: [{ id: "c1", name: "shell", arguments: "{}" }],
        prompt_tokens: 10,
        completion_tokens: 2,
      }]);
      store.appendMessages(s.id, [{ role: "tool", content: "ok", tool_call_id: "c1", name: "shell" }]);
      const messages = store.activeMessages(s.id);
      assert.deepEqual(messages.map((m) => [m.seq, m.role]), [[1, "user"], [2, "assistant"], [3, "tool"]]);
      assert.deepEqual(messages[1]!.tool_calls, [{ id: "c1", name: "shell", arguments: "{}" }]);
      assert.equal(messages[1]!.prompt_tokens, 10);
      assert.equal(messages[2]!.tool_call_id, "c1");
      assert.equal(assistant!.id, messages[1]!.id);
    }),
  );

  Deno.test(
    `${name}: inactive rows leave the transcript but stay in allMessages`,
    withStore((store) => {
      const s = store.createSession({ job: "j" });
      store.appendMessages(s.id, [{ role: "user", content: "a" }, { role: "user", content: "b" }]);
      store.immediate(() => store.db.prepare("UPDATE messages SET active = 0 WHERE seq = 1").run());
      assert.deepEqual(store.activeMessages(s.id).map((m) => m.content), ["b"]);
      assert.deepEqual(store.allMessages(s.id).map((m) => [m.content, m.active]), [["a", false], [
        "b",
        true,
      ]]);
    }),
  );

  Deno.test(
    `${name}: per-session state round-trips and is deleted`,
    withStore((store) => {
      const s = store.createSession({ job: "j" });
      store.setState(s.id, "loop", { tick: 2 });
      assert.deepEqual(store.getState(s.id, "loop"), { tick: 2 });
      store.setState(s.id, "loop", { tick: 3 });
      assert.deepEqual(store.getState(s.id, "loop"), { tick: 3 });
      store.deleteState(s.id, "loop");
      assert.equal(store.getState(s.id, "loop"), undefined);
    }),
  );

  Deno.test(
    `${name}: a throwing transaction rolls back`,
    withStore((store) => {
      const s = store.createSession({ job: "j" });
      assert.throws(() =>
        store.immediate(() => {
          store.appendMessages(s.id, [{ role: "user", content: "lost" }]);
          throw new Error("boom");
        }), /boom/);
      assert.equal(store.allMessages(s.id).length, 0);
    }),
  );
}
