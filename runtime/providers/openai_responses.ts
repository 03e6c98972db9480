/**
 * The OpenAI Responses API on the wire: Hermes's message transcript as Responses input items and back. The
 * transcript stays messages everywhere else (compaction, redaction, read notes, the store); only this
 * boundary speaks items. An assistant message becomes its reasoning items (kept in `Message.reasoning`, as
 * Anthropic's thinking blocks are), its text and its `function_call` items, in that order; a tool message a
 * `function_call_output`. Requests are stateless (`store: false`): a reasoning model's reasoning comes back
 * encrypted (`include: ["reasoning.encrypted_content"]`) and goes out again with every later request.
 */
import OpenAI from "./openai_sdk.ts";
import type { ModelRequest, ModelResponse } from "./provider.ts";
import { isStrictSchema } from "./strict_schema.ts";
import type { Message, ReasoningBlock, ToolCall, Usage } from "../core/types.ts";
import { tokenUsage } from "./usage.ts";
import { IncompleteResponseStream } from "./openai_responses_errors.ts";

type ResponsesParams = OpenAI.Responses.ResponseCreateParamsNonStreaming;
type InputItem = OpenAI.Responses.ResponseInputItem;
type OutputItem = OpenAI.Responses.ResponseOutputItem;

export interface ResponsesBodyOptions {
  /** A reasoning model: its reasoning items are asked for and sent back, `reasoning.effort` goes with it. */
  reasoning?: boolean;
  reasoningEffort?: "minimal" | "low" | "medium" | "high";
  promptCacheKey?: string;
}

export function toResponsesBody(request: ModelRequest, options: ResponsesBodyOptions = {}): ResponsesParams {
  return {
    model: request.model,
    input: request.messages.flatMap(toInputItems),
    // Stateless: nothing is kept on the server, every request carries the whole transcript.
    store: false,
    ...(options.reasoning
      ? {
        include: ["reasoning.encrypted_content" as const],
        ...(options.reasoningEffort ? { reasoning: { effort: options.reasoningEffort } } : {}),
      }
      : {}),
    ...(request.tools.length
      ? {
        tools: request.tools.map((tool) => ({
          type: "function" as const,
          name: tool.name,
          description: tool.description,
          parameters: tool.parameters,
          // As Chat Completions sends them: the Responses API would otherwise make them strict.
          strict: false,
        })),
      }
      : {}),
    ...(request.max_tokens === undefined ? {} : { max_output_tokens: request.max_tokens }),
    ...(request.temperature === undefined || options.reasoning ? {} : { temperature: request.temperature }),
    ...(options.promptCacheKey ? { prompt_cache_key: options.promptCacheKey } : {}),
    ...(request.output_schema
      ? {
        text: {
          format: {
            type: "json_schema" as const,
            name: request.output_schema.name,
            schema: request.output_schema.schema,
            strict: isStrictSchema(request.output_schema.schema),
          },
        },
      }
      : {}),
  };
}

/** A transcript message as the input items that carry it. */
export function toInputItems(message: Message): InputItem[] {
  switch (message.role) {
    case "system":
      return [{ role: "system", content: message.content }];
    case "user":
      return [{ role: "user", content: message.content }];
    case "tool":
      return [{ type: "function_call_output", call_id: message.tool_call_id ?? "", output: message.content }];
    case "assistant": {
      const items: InputItem[] = [];
      for (const block of message.reasoning ?? []) {
        // Only OpenAI's own items: Anthropic thinking (a session resumed on another provider) means nothing here.
        if (block.type !== "openai_reasoning") continue;
        items.push({
          type: "reasoning",
          id: block.id,
          encrypted_content: block.encrypted_content,
          summary: block.summary.map((text) => ({ type: "summary_text" as const, text })),
        });
      }
      if (message.content !== "") items.push({ role: "assistant", content: message.content });
      for (const call of message.tool_calls ?? []) {
        items.push({ type: "function_call", call_id: call.id, name: call.name, arguments: call.arguments });
      }
      return items;
    }
  }
}

/**
 * A finished response as Hermes takes it. Endings map to the finish reasons the rest of Hermes reads:
 * `incomplete` for `max_output_tokens` is `length` (output_truncated), for `content_filter` and a refusal
 * `content_filter` (content_filtered); `failed` raises its error, judged like any other provider error.
 */
export function fromResponse(
  response: OpenAI.Responses.Response,
  fallbackItems: OutputItem[] = [],
): ModelResponse {
  if (response.status === "failed" || response.error) {
    throw new OpenAI.APIError(
      undefined,
      response.error ?? { code: "server_error", message: "the response failed" },
      undefined,
      undefined,
    );
  }
  const output = response.output?.length ? response.output : fallbackItems;
  let content = "";
  let refusal = "";
  const calls: ToolCall[] = [];
  const reasoning: ReasoningBlock[] = [];
  for (const item of output) {
    if (item.type === "message") {
      for (const part of item.content ?? []) {
        if (part.type === "output_text") content += part.text;
        else if (part.type === "refusal") refusal += part.refusal;
      }
    } else if (item.type === "function_call") {
      calls.push({
        id: item.call_id || item.id || newCallId(),
        name: item.name,
        arguments: item.arguments ?? "",
      });
    } else if (item.type === "reasoning" && item.encrypted_content) {
      reasoning.push({
        type: "openai_reasoning",
        id: item.id,
        encrypted_content: item.encrypted_content,
        summary: (item.summary ?? []).map((part) => part.text),
      });
    }
  }
  const message: Message = {
    role: "assistant",
    content: content === "" ? refusal : content,
    ...(calls.length ? { tool_calls: calls } : {}),
    ...(reasoning.length ? { reasoning } : {}),
  };
  return { message, usage: usageOf(response.usage), finish_reason: finishReason(response, refusal, calls) };
}

function finishReason(response: OpenAI.Responses.Response, refusal: string, calls: ToolCall[]): string {
  if (response.status === "incomplete") {
    return response.incomplete_details?.reason === "content_filter" ? "content_filter" : "length";
  }
  if (refusal !== "" && calls.length === 0) return "content_filter";
  return calls.length ? "tool_calls" : "stop";
}

export function usageOf(usage: OpenAI.Responses.ResponseUsage | null | undefined): Usage | null {
  if (!usage) return null;
  const details = [usage.input_tokens_details?.cached_tokens, usage.output_tokens_details?.reasoning_tokens];
  return tokenUsage(usage.input_tokens, usage.output_tokens, ...details);
}

/** The stream ended before a `response.completed`, `response.incomplete` or `response.failed` event. */
/**
 * Follows a streamed response: text deltas as they come, the items as they finish, and the final response
 * from its terminal event. An `error` event raises it at once.
 */
export class ResponsesStream {
  #items: OutputItem[] = [];
  #final: OpenAI.Responses.Response | null = null;

  /** The event's text for `onDelta` and its characters of reply (text, arguments, reasoning) for `onOutput`. */
  add(event: OpenAI.Responses.ResponseStreamEvent): { text: string; chars: number } {
    switch (event.type) {
      case "response.output_text.delta":
        return { text: event.delta, chars: event.delta.length };
      case "response.function_call_arguments.delta":
      case "response.reasoning_summary_text.delta":
      case "response.refusal.delta":
        return { text: "", chars: event.delta.length };
      case "response.output_item.done":
        this.#items[event.output_index] = event.item;
        break;
      case "response.completed":
      case "response.incomplete":
      case "response.failed":
        this.#final = event.response;
        break;
      case "error":
        throw new OpenAI.APIError(
          undefined,
          { code: event.code, message: event.message, param: event.param },
          undefined,
          undefined,
        );
    }
    return { text: "", chars: 0 };
  }

  result(): ModelResponse {
    if (!this.#final) throw new IncompleteResponseStream();
    return fromResponse(this.#final, this.#items.filter((item) => item !== undefined));
  }
}

function newCallId(): string {
  return `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
}
