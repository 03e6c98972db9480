/**
 * Assembles a streamed Messages API reply from its events (message_start, content_block_start/delta/stop,
 * message_delta, message_stop; the SDK drops `ping` and raises `error`) into the message a non-streaming
 * call returns. A stream that ends before `message_stop` is incomplete: it raises, and is retried when none
 * of its text was shown yet.
 */
import type { WireResponse, WireUsage } from "./anthropic_wire.ts";

export class IncompleteStream extends Error {
  constructor() {
    super("the stream ended before message_stop");
    this.name = "IncompleteStream";
  }
}

type Block = { type: string } & Record<string, unknown>;

export class StreamAssembler {
  #onText: ((text: string) => void) | undefined;
  #onChars: ((chars: number) => void) | undefined;
  #blocks: Block[] = [];
  /** Tool input JSON as it arrives, by block index. */
  #json = new Map<number, string>();
  #usage: WireUsage = {};
  #stop: string | null = null;
  #id: string | undefined;
  #done = false;

  /** `onText`: streamed answer text; `onChars`: characters of text, tool input and thinking as they come. */
  constructor(onText?: (text: string) => void, onChars?: (chars: number) => void) {
    this.#onText = onText;
    this.#onChars = onChars;
  }

  add(event: Record<string, unknown>): void {
    switch (event.type) {
      case "message_start": {
        const message = event.message as { id?: string; usage?: WireUsage } | undefined;
        this.#id = message?.id;
        this.#mergeUsage(message?.usage);
        break;
      }
      case "content_block_start": {
        const block = structuredClone(event.content_block as Block);
        this.#blocks[Number(event.index)] = block;
        if (block.type === "tool_use") this.#json.set(Number(event.index), "");
        break;
      }
      case "content_block_delta": {
        const index = Number(event.index);
        const block = this.#blocks[index];
        const delta = event.delta as { type: string } & Record<string, string>;
        if (!block) throw new Error(`content_block_delta for block ${index} before its content_block_start`);
        const chars = (delta.text ?? delta.partial_json ?? delta.thinking ?? "").length;
        if (chars && delta.type !== "signature_delta") this.#onChars?.(chars);
        if (delta.type === "text_delta") {
          block.text = String(block.text ?? "") + delta.text;
          if (delta.text) this.#onText?.(delta.text);
        } else if (delta.type === "input_json_delta") {
          this.#json.set(index, (this.#json.get(index) ?? "") + delta.partial_json);
        } else if (delta.type === "thinking_delta") {
          block.thinking = String(block.thinking ?? "") + delta.thinking;
        } else if (delta.type === "signature_delta") {
          block.signature = delta.signature;
        }
        break;
      }
      case "content_block_stop": {
        const index = Number(event.index);
        const json = this.#json.get(index);
        const block = this.#blocks[index];
        if (block && json !== undefined) block.input = json.trim() === "" ? {} : JSON.parse(json);
        break;
      }
      case "message_delta": {
        const delta = event.delta as { stop_reason?: string | null } | undefined;
        if (delta?.stop_reason) this.#stop = delta.stop_reason;
        this.#mergeUsage(event.usage as WireUsage | undefined);
        break;
      }
      case "message_stop":
        this.#done = true;
        break;
    }
  }

  /** message_delta's usage is cumulative: a field it carries replaces message_start's. */
  #mergeUsage(usage: WireUsage | undefined): void {
    if (!usage) return;
    for (const [key, value] of Object.entries(usage)) {
      if (typeof value === "number") (this.#usage as Record<string, number>)[key] = value;
    }
  }

  result(): WireResponse {
    if (!this.#done) throw new IncompleteStream();
    return {
      ...(this.#id ? { id: this.#id } : {}),
      content: this.#blocks.filter((b) => b !== undefined),
      stop_reason: this.#stop,
      usage: this.#usage,
    };
  }
}
