/**
 * plugins/sdk.ts is copied next to plugins, so it cannot import the runtime's types; these assertions keep
 * the copies equal. A change on either side fails `deno check` (and so `deno test`) here.
 */
import type * as runtime from "../runtime/core/hooks.ts";
import type { CommandContext } from "../runtime/agent/slash.ts";
import type { ToolContext } from "../runtime/tools/tool.ts";
import type { InputSource } from "../runtime/core/types.ts";
import type * as sdk from "./sdk.ts";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
const assertType = <T extends true>(_proof?: T) => {};

/** The `Hooks` method that serves each hook name (the runtime's dispatch in plugins/dispatch.ts). */
interface Method {
  on_session_start: "onSessionStart";
  on_session_end: "onSessionEnd";
  pre_llm_call: "preLlmCall";
  post_llm_call: "postLlmCall";
  pre_tool_call: "preToolCall";
  post_tool_call: "postToolCall";
  post_compaction: "postCompaction";
  on_session_delete: "onSessionDelete";
  on_loop_tick: "onLoopTick";
}
type Payload<H extends sdk.HookName> = Parameters<runtime.Hooks[Method[H]]>[0];
type Returned<H extends sdk.HookName> = Awaited<ReturnType<runtime.Hooks[Method[H]]>>;
/** What a handler's answer means once "nothing" (void, undefined, null) is set aside. */
type Answer<H extends sdk.HookName> = Exclude<sdk.HookResults[H], void | undefined | null>;

Deno.test("the SDK names every hook the runtime calls, and no other", () => {
  assertType<Equal<keyof Method, sdk.HookName>>();
  assertType<Equal<Method[sdk.HookName], keyof runtime.Hooks>>();
  assertType<Equal<keyof sdk.HookPayloads, sdk.HookName>>();
  assertType<Equal<keyof sdk.HookResults, sdk.HookName>>();
});

Deno.test("each hook payload in the SDK is the runtime's", () => {
  assertType<Equal<sdk.HookPayloads["on_session_start"], runtime.SessionStartPayload>>();
  assertType<Equal<sdk.HookPayloads["on_session_end"], runtime.SessionEndPayload>>();
  assertType<Equal<sdk.HookPayloads["pre_llm_call"], runtime.PreLlmCallPayload>>();
  assertType<Equal<sdk.HookPayloads["post_llm_call"], runtime.PostLlmCallPayload>>();
  assertType<Equal<sdk.HookPayloads["pre_tool_call"], runtime.PreToolCallPayload>>();
  assertType<Equal<sdk.HookPayloads["post_tool_call"], runtime.PostToolCallPayload>>();
  assertType<Equal<sdk.HookPayloads["post_compaction"], runtime.PostCompactionPayload>>();
  assertType<Equal<sdk.HookPayloads["on_session_delete"], runtime.SessionDeletePayload>>();
  assertType<Equal<sdk.HookPayloads["on_loop_tick"], runtime.LoopTickPayload>>();
  // The same through the name → method map, so a payload type swapped on a `Hooks` method is caught too.
  assertType<Equal<{ [H in sdk.HookName]: sdk.HookPayloads[H] }, { [H in sdk.HookName]: Payload<H> }>>();
});

Deno.test("each hook answer in the SDK is what the runtime makes of it", () => {
  // Observers: the runtime awaits them and ignores any value.
  type Observer = Exclude<sdk.HookName, "pre_llm_call" | "pre_tool_call">;
  assertType<Equal<{ [H in Observer]: sdk.HookResults[H] }, { [H in Observer]: Returned<H> }>>();
  // pre_llm_call: each plugin's string is one of the texts the runtime appends.
  assertType<Equal<Answer<"pre_llm_call">, Returned<"pre_llm_call">[number]>>();
  // pre_tool_call: a plugin's decision is the runtime's decision (nothing means allow).
  assertType<Equal<Answer<"pre_tool_call">, runtime.PreToolDecision>>();
  assertType<Equal<Returned<"pre_tool_call">, runtime.PreToolDecision>>();
});

Deno.test("commands and tools get the runtime's context fields", () => {
  assertType<Equal<sdk.CommandCallContext, Omit<CommandContext, "signal">>>();
  assertType<Equal<sdk.InputSource, InputSource>>();
  assertType<Equal<sdk.ToolCallContext, Pick<ToolContext, "session_id">>>();
});
