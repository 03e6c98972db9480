/**
 * Anthropic's prompt cache, emulated as the Messages API documents it: a request is read in order — tools,
 * system, then each message's content blocks — and only prefixes that end at a `cache_control` breakpoint
 * are written. A breakpoint reads the longest cached prefix ending at it or at one of the 20 block
 * boundaries before it. Usage splits the request into `cache_read_input_tokens` (the longest prefix read),
 * `cache_creation_input_tokens` (from there to the last breakpoint, written now) and `input_tokens` (after
 * the last breakpoint). A prefix shorter than `minTokens` is not cached. Tokens are chars/4 of each block's
 * JSON without its `cache_control`.
 */

export interface CacheUsage {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** One breakpoint of a request: its place in the block order and a hash of the prefix ending there. */
export interface Breakpoint {
  /** `tools`, `system` or `messages.N.content.M`. */
  where: string;
  /** Blocks before and including this one. */
  blocks: number;
  tokens: number;
  prefix: string;
}

export interface CacheReading extends CacheUsage {
  breakpoints: Breakpoint[];
  /** The request's total input tokens. */
  total_tokens: number;
}

export const LOOKBACK_BLOCKS = 20;

interface Block {
  where: string;
  text: string;
  marked: boolean;
}

export class AnthropicCache {
  readonly minTokens: number;
  /** prefix hash → its tokens. */
  #entries = new Map<string, number>();

  constructor(options: { minTokens?: number } = {}) {
    this.minTokens = options.minTokens ?? 1024;
  }

  /** Reads the request against the cache and writes its breakpoints' prefixes. */
  read(body: Record<string, unknown>): CacheReading {
    const blocks = blocksOf(body);
    const hashes: string[] = [];
    const tokensAt: number[] = [];
    let hash = "0";
    let chars = 0;
    for (const block of blocks) {
      hash = chain(hash, block.text);
      chars += block.text.length;
      hashes.push(hash);
      tokensAt.push(Math.floor(chars / 4));
    }
    const total = Math.ceil(chars / 4);
    const marks = blocks.flatMap((b, i) => b.marked ? [i] : []);
    let read = 0;
    for (const mark of marks) {
      for (let j = mark; j >= 0 && j >= mark - LOOKBACK_BLOCKS; j--) {
        if (this.#entries.has(hashes[j]!)) {
          read = Math.max(read, tokensAt[j]!);
          break;
        }
      }
    }
    let written = 0;
    for (const mark of marks) {
      if (tokensAt[mark]! < this.minTokens) continue;
      this.#entries.set(hashes[mark]!, tokensAt[mark]!);
      written = tokensAt[mark]!;
    }
    const creation = Math.max(0, written - read);
    return {
      cache_read_input_tokens: read,
      cache_creation_input_tokens: creation,
      input_tokens: total - read - creation,
      total_tokens: total,
      breakpoints: marks.map((i) => ({
        where: blocks[i]!.where,
        blocks: i + 1,
        tokens: tokensAt[i]!,
        prefix: hashes[i]!,
      })),
    };
  }
}

/** The request's blocks in the order the model reads them; messages start with their role. */
export function blocksOf(body: Record<string, unknown>): Block[] {
  const out: Block[] = [];
  const add = (where: string, value: unknown, prefix = "") => {
    const block = value as Record<string, unknown>;
    const { cache_control, ...rest } = block;
    out.push({ where, text: prefix + JSON.stringify(rest), marked: cache_control !== undefined });
  };
  for (const [i, tool] of ((body.tools ?? []) as unknown[]).entries()) add(`tools.${i}`, tool);
  const system = body.system;
  if (typeof system === "string") add("system", { type: "text", text: system });
  else for (const [i, block] of ((system ?? []) as unknown[]).entries()) add(`system.${i}`, block);
  for (const [m, message] of ((body.messages ?? []) as { role: string; content: unknown }[]).entries()) {
    const content = typeof message.content === "string"
      ? [{ type: "text", text: message.content }]
      : message.content as unknown[];
    for (const [b, block] of content.entries()) {
      add(`messages.${m}.content.${b}`, block, b === 0 ? `${message.role}:` : "");
    }
  }
  return out;
}

/** Two FNV-1a hashes (64 bits) of the previous hash and the block: equal hashes mean equal prefixes here. */
function chain(previous: string, text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01234567;
  const input = `${previous}|${text}`;
  for (let i = 0; i < input.length; i++) {
    const c = input.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x01000193) >>> 0;
  }
  return `${a.toString(16)}${b.toString(16)}.${text.length}`;
}
