/**
 * Hook dispatch (docs/plugins.md): each `Hooks` method fans out to the healthy plugins that registered the
 * hook, in plugin order, all at once; every call is bounded by the plugin's hook_timeout.
 * Observers' errors are reported and ignored; `pre_llm_call` keeps non-empty strings; `pre_tool_call`
 * fails closed.
 */
import { errorMessage } from "../runtime/core/errors.ts";
import type { Hooks, PreToolCallPayload, PreToolDecision } from "../runtime/core/hooks.ts";
import type { LoadedPlugin } from "./load.ts";
import { PluginFailure } from "./process.ts";
import type { HookName } from "./sdk.ts";

/** Reports a plugin error (log + `plugin.error` event); `hook` null when no call was in flight. */
export type Report = (
  plugin: string,
  hook: string | null,
  sessionId: string | undefined,
  error: unknown,
) => void;

export function pluginHooks(plugins: readonly LoadedPlugin[], report: Report): Hooks {
  const targets = (hook: HookName) =>
    plugins.filter((p) => !p.process.failure && p.registrations.hooks.includes(hook));

  // A handler error is reported here; a process failure was already reported by the process.
  const call = async (plugin: LoadedPlugin, hook: HookName, payload: { session_id: string }) => {
    try {
      return await plugin.process.call("hook", { hook, payload }, {
        timeout_ms: plugin.timeout_ms,
        label: hook,
        session_id: payload.session_id,
      });
    } catch (error) {
      if (!(error instanceof PluginFailure)) report(plugin.manifest.name, hook, payload.session_id, error);
      throw error;
    }
  };

  const observe = (hook: HookName) => async (payload: { session_id: string }) => {
    await Promise.all(targets(hook).map((p) => call(p, hook, payload).catch(() => {})));
  };

  /**
   * All plugins are asked at once (like Claude Code's PreToolUse hooks) with the model's arguments; the
   * answers are applied in plugin order: the first block or failure blocks, and each `modify` replaces
   * the arguments.
   */
  const preToolCall = async (payload: PreToolCallPayload): Promise<PreToolDecision> => {
    const asked = targets("pre_tool_call");
    const answers = await Promise.all(
      asked.map((plugin) =>
        call(plugin, "pre_tool_call", payload).then((decision) => ({ decision }), (error) => ({ error }))
      ),
    );
    let args: Record<string, unknown> | undefined;
    for (const [i, answer] of answers.entries()) {
      const name = asked[i]!.manifest.name;
      if ("error" in answer) {
        return {
          action: "block",
          message: `blocked: plugin "${name}" failed in pre_tool_call: ${errorMessage(answer.error)}`,
        };
      }
      const d = answer.decision as { action?: unknown; message?: unknown; args?: unknown } | null | undefined;
      if (d === null || d === undefined || d.action === "allow") continue;
      if (d.action === "block") {
        return {
          action: "block",
          message: typeof d.message === "string" ? d.message : `blocked by plugin "${name}"`,
        };
      }
      if (d.action === "modify" && d.args && typeof d.args === "object" && !Array.isArray(d.args)) {
        args = d.args as Record<string, unknown>;
        continue;
      }
      const why = `pre_tool_call returned an invalid decision ${JSON.stringify(d)?.slice(0, 200)}`;
      report(name, "pre_tool_call", payload.session_id, why);
      return { action: "block", message: `blocked: plugin "${name}" ${why}` };
    }
    return args ? { action: "modify", args } : { action: "allow" };
  };

  return {
    onSessionStart: observe("on_session_start"),
    onSessionEnd: observe("on_session_end"),
    preLlmCall: async (payload) => {
      const texts = await Promise.all(
        targets("pre_llm_call").map((p) => call(p, "pre_llm_call", payload).catch(() => null)),
      );
      return texts.filter((t): t is string => typeof t === "string" && t.trim() !== "");
    },
    postLlmCall: observe("post_llm_call"),
    preToolCall,
    postToolCall: observe("post_tool_call"),
    postCompaction: observe("post_compaction"),
    onSessionDelete: observe("on_session_delete"),
    onLoopTick: observe("on_loop_tick"),
  };
}
