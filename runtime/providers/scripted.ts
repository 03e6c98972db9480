/**
 * The `scripted` provider: canned replies from a YAML/JSON file, for offline runs, demos and tests.
 * Entries with `match` answer when the last user message contains that text; the rest answer in order.
 */
import type { Clock } from "../core/clock.ts";
import { parseDuration } from "../core/duration.ts";
import { ValidationError } from "../core/errors.ts";
import {
  type CompleteOptions,
  type ModelRequest,
  type ModelResponse,
  type Provider,
  type ProviderContext,
  ProviderError,
} from "./provider.ts";
import type { ResolvedModel } from "./model.ts";
import type { ToolCall } from "../core/types.ts";
import { type ScriptEntry, ScriptListSchema, ScriptObjectSchema } from "./script.ts";
import { parseYamlSource } from "../core/yaml_source.ts";
import { describeIssue } from "../core/yaml_positions.ts";

/** Reads and checks a script file; a missing or malformed file is a located ValidationError (exit 2). */
export function loadScript(path: string): ScriptEntry[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    throw new ValidationError(`Cannot read scripted replies "${path}": no such file (model.script)`);
  }
  const source = parseYamlSource(path, text);
  const list = Array.isArray(source.value);
  if (!list && (source.value === null || typeof source.value !== "object")) {
    throw new ValidationError(
      `${path}:1:1: expected a list of replies ({content} or {tool_calls}) or {replies: [...]}`,
    );
  }
  const schema = list ? ScriptListSchema : ScriptObjectSchema;
  const result = schema.safeParse(source.value);
  if (!result.success) {
    throw new ValidationError(describeIssue(path, source.doc, source.lines, schema, result.error.issues[0]!));
  }
  return Array.isArray(result.data) ? result.data : result.data.replies;
}

/** The registry's entry point (providers/registry.ts): the replies of `model.script`, an absolute path. */
export function providerFor(model: ResolvedModel<{ script: string }>, context: ProviderContext): Provider {
  return createScriptedProvider(loadScript(model.settings.script), { clock: context.clock });
}

export function createScriptedProvider(script: readonly ScriptEntry[], options: { clock: Clock }): Provider {
  const used = new Set<number>();
  let calls = 0;
  const pick = (request: ModelRequest): ScriptEntry | undefined => {
    const lastUser = [...request.messages].reverse().find((m) => m.role === "user")?.content ?? "";
    let index = script.findIndex((e, i) =>
      !used.has(i) && e.match !== undefined && lastUser.includes(e.match)
    );
    if (index < 0) index = script.findIndex((e, i) => !used.has(i) && e.match === undefined);
    if (index < 0) return undefined;
    used.add(index);
    return script[index];
  };
  return {
    name: "scripted",
    async complete(request: ModelRequest, callOptions: CompleteOptions = {}): Promise<ModelResponse> {
      calls++;
      const entry = pick(request);
      if (!entry) {
        throw new ProviderError(
          `Cannot answer model call ${calls}: the scripted replies are used up (${script.length} in the script)`,
        );
      }
      if (entry.delay) await options.clock.sleep(parseDuration(entry.delay), callOptions.signal);
      callOptions.signal?.throwIfAborted();
      if (entry.error) {
        throw new ProviderError(`Scripted error: HTTP ${entry.error.status} ${entry.error.message}`, {
          status: entry.error.status,
          contextOverflow: entry.error.code === "context_length_exceeded",
        });
      }
      const toolCalls: ToolCall[] = (entry.tool_calls ?? []).map((call, i) => ({
        id: call.id ?? `call_${calls}_${i + 1}`,
        name: call.name,
        arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
      }));
      const content = entry.content ?? "";
      if (content && callOptions.onDelta) callOptions.onDelta(content);
      const chars = content.length + toolCalls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
      if (chars) callOptions.onOutput?.(chars);
      const promptChars = request.messages.reduce((n, m) => n + m.content.length, 0);
      return {
        message: { role: "assistant", content, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
        usage: {
          prompt_tokens: entry.usage?.prompt_tokens ?? Math.ceil(promptChars / 4),
          completion_tokens: entry.usage?.completion_tokens ?? Math.ceil(content.length / 4),
          cached_tokens: entry.usage?.cached_tokens ?? 0,
          ...(entry.usage?.cache_write_tokens ? { cache_write_tokens: entry.usage.cache_write_tokens } : {}),
          ...(entry.usage?.reasoning_tokens ? { reasoning_tokens: entry.usage.reasoning_tokens } : {}),
        },
        finish_reason: toolCalls.length ? "tool_calls" : "stop",
      };
    },
  };
}
