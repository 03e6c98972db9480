/**
 * Canned model replies, shared by the `scripted` provider and the test OpenAI-compatible server.
 * A script file is YAML or JSON: a list of entries, or `{replies: [...]}`.
 */
export interface ScriptToolCall {
  name: string;
  /** An object (serialised for the model) or raw JSON text. */
  arguments?: Record<string, unknown> | string;
  id?: string;
}

export interface ScriptEntry {
  /** Used only when the last user message contains this substring; unmatched entries are used in order. */
  match?: string;
  content?: string;
  tool_calls?: ScriptToolCall[];
  /** Wait this long before answering (e.g. "2s"), to simulate a slow model. */
  delay?: string;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
  /** Fail this call instead of answering (test server: HTTP status and message). */
  error?: { status: number; message: string; code?: string; retry_after?: number };
  /** Test server only: put the reply on the wire the way some servers in the wild do. */
  wire?: WireQuirks;
}

/** How OpenAI-compatible servers in the wild (llama.cpp, vLLM, Ollama, LiteLLM, mocks) differ from OpenAI. */
export interface WireQuirks {
  /** The finish_reason sent (`null`: none at all); default `stop`, or `tool_calls` when there are calls. */
  finish_reason?: string | null;
  /** Tool calls without `"type": "function"`. */
  untyped_tool_calls?: boolean;
  /** A stream that ends without `data: [DONE]`. */
  no_done?: boolean;
  /** HTTP 200 whose body (or first stream event) is `{"error": …}` instead of the reply. */
  error_body?: Record<string, unknown>;
}
