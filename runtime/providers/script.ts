/**
 * Canned model replies, shared by the `scripted` provider and the test OpenAI-compatible server.
 * A script file is YAML or JSON: a list of entries, or `{replies: [...]}`. One zod schema gives the types
 * and the check that makes a malformed file a located exit-2 error.
 */
import { z } from "zod";
import { DURATION_EXPECTED, DURATION_PATTERN } from "../core/duration.ts";

const Duration = z.string().regex(DURATION_PATTERN, DURATION_EXPECTED);

const ToolCall = z.strictObject({
  /** The tool to call. */
  name: z.string().min(1),
  arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).optional(),
  id: z.string().min(1).optional(),
});

const Count = z.number().int().min(0);

export const ScriptEntrySchema = z.strictObject({
  /** Used only when the last user message contains this substring; unmatched entries are used in order. */
  match: z.string().optional(),
  content: z.string().optional(),
  /** Test Anthropic server: the model's extended thinking, sent as a signed thinking block before the reply. */
  thinking: z.string().optional(),
  tool_calls: z.array(ToolCall).optional(),
  /** Wait this long before answering (e.g. "2s"), to simulate a slow model. */
  delay: Duration.optional(),
  usage: z.strictObject({
    prompt_tokens: Count.optional(),
    completion_tokens: Count.optional(),
    /** Prompt tokens reported as served from the provider's cache (`prompt_tokens_details.cached_tokens`). */
    cached_tokens: Count.optional(),
    /** Prompt tokens reported as written to the provider's cache. */
    cache_write_tokens: Count.optional(),
    /** Completion tokens reported as reasoning (`completion_tokens_details.reasoning_tokens`). */
    reasoning_tokens: Count.optional(),
  }).optional(),
  /** Fail this call instead of answering (test server: HTTP status and message). */
  error: z.strictObject({
    status: z.number().int().min(100).max(599),
    message: z.string(),
    code: z.string().optional(),
    retry_after: z.number().min(0).optional(),
  }).optional(),
  /** Test server only: put the reply on the wire the way servers in the wild (llama.cpp, vLLM, Ollama) do. */
  wire: z.strictObject({
    /** The finish_reason sent (`null`: none at all); default `stop`, or `tool_calls` when there are calls. */
    finish_reason: z.string().nullable().optional(),
    /** Tool calls without `"type": "function"`. */
    untyped_tool_calls: z.boolean().optional(),
    /** A stream that ends without `data: [DONE]`. */
    no_done: z.boolean().optional(),
    /** HTTP 200 whose body (or first stream event) is `{"error": …}` instead of the reply. */
    error_body: z.record(z.string(), z.unknown()).optional(),
  }).optional(),
}).refine(
  (entry) =>
    entry.content !== undefined || entry.tool_calls !== undefined || entry.error !== undefined ||
    entry.wire?.error_body !== undefined,
  { message: 'expected "content", "tool_calls" or "error"' },
);

/** A script file: a list of entries, or `{replies: [...]}`. */
export const ScriptListSchema = z.array(ScriptEntrySchema);
export const ScriptObjectSchema = z.strictObject({ replies: ScriptListSchema });

export type ScriptEntry = z.infer<typeof ScriptEntrySchema>;
export type ScriptToolCall = z.infer<typeof ToolCall>;
export type WireQuirks = NonNullable<ScriptEntry["wire"]>;
