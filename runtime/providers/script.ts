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
}
