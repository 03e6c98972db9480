/**
 * Behaviour every `Hooks` implementation must show (no hooks, the subprocess plugin host, lazily started
 * global plugins): observers resolve, pre_llm_call gives strings, pre_tool_call gives a decision.
 */
import assert from "node:assert/strict";
import type { Hooks } from "../../runtime/core/hooks.ts";

export interface HooksSubject {
  hooks: Hooks;
  /** What a pass-through implementation injects on pre_llm_call (empty for none). */
  injected: string[];
  close(): Promise<void>;
}

export function hooksContract(
  name: string,
  make: () => Promise<HooksSubject>,
  options: { ignore?: boolean } = {},
): void {
  const session_id = "contract-session";
  const test = (title: string, fn: () => Promise<void>) =>
    Deno.test({ name: title, ignore: options.ignore ?? false, fn });
  const withSubject = (fn: (s: HooksSubject) => Promise<void>) => async () => {
    const subject = await make();
    try {
      await fn(subject);
    } finally {
      await subject.close();
    }
  };

  test(
    `${name}: every observer hook resolves`,
    withSubject(async ({ hooks }) => {
      await hooks.onSessionStart({ session_id });
      await hooks.postLlmCall({ session_id, assistant_message: { content: "hi" }, turn: 1 });
      await hooks.postToolCall({
        session_id,
        tool_name: "shell",
        args: {},
        result: "ok",
        duration_ms: 1,
        status: "ok",
      });
      await hooks.postCompaction({
        session_id,
        old_session_id: "",
        kind: "summarize",
        reason: "manual",
        before_tokens: 10,
        after_tokens: 5,
        messages_removed: 2,
      });
      await hooks.onLoopTick({ session_id, kind: "loop", tick: 1 });
      await hooks.onSessionDelete({ session_id, reason: "delete", deleted_ids: [session_id] });
      await hooks.onSessionEnd({ session_id, status: "success", reason: "completed" });
    }),
  );

  test(
    `${name}: pre_llm_call returns the injected strings in order`,
    withSubject(async (subject) => {
      const texts = await subject.hooks.preLlmCall({ session_id, user_message: "hello", turn: 1 });
      assert.deepEqual(texts, subject.injected);
    }),
  );

  test(
    `${name}: pre_tool_call of a pass-through implementation allows`,
    withSubject(async ({ hooks }) => {
      const decision = await hooks.preToolCall({
        session_id,
        tool_name: "shell",
        args: { command: "ls" },
        tool_call_id: "c1",
      });
      assert.equal(decision.action, "allow");
    }),
  );
}
