/**
 * What model calls cost: list prices of the common OpenAI and Anthropic models, in USD per million tokens,
 * as the vendors' pricing pages gave them on {@linkcode PRICES_TAKEN} (standard tier, no batch discount,
 * Anthropic's 5-minute cache writes). Prices change: `model.pricing` in a job or config.yaml overrides the
 * entry of its model, and a model not listed here has no price (cost_usd null) until it is given one.
 */
import type { Usage } from "../core/types.ts";

/** The day the table below was taken from the vendors' pricing pages. */
export const PRICES_TAKEN = "2025-11-24";

/** USD per million tokens. */
export interface Price {
  /** Uncached prompt tokens. */
  input: number;
  /** Completion tokens, reasoning tokens included. */
  output: number;
  /** Prompt tokens read from the provider's cache. */
  cached_input: number;
  /** Prompt tokens written to the provider's cache (OpenAI charges none beyond input). */
  cache_write: number;
}

/** OpenAI: cache writes cost the input price, cache reads the listed cached-input price. */
function openai(input: number, cached_input: number, output: number): Price {
  return { input, output, cached_input, cache_write: input };
}

/** Anthropic: cache reads are 0.1× input, 5-minute cache writes 1.25× input (listed, not computed). */
function anthropic(input: number, cache_write: number, cached_input: number, output: number): Price {
  return { input, output, cached_input, cache_write };
}

const TABLE: Readonly<Record<string, Price>> = {
  "gpt-5": openai(1.25, 0.125, 10),
  "gpt-5-chat": openai(1.25, 0.125, 10),
  "gpt-5-mini": openai(0.25, 0.025, 2),
  "gpt-5-nano": openai(0.05, 0.005, 0.4),
  "gpt-5.1": openai(1.25, 0.125, 10),
  "gpt-4.1": openai(2, 0.5, 8),
  "gpt-4.1-mini": openai(0.4, 0.1, 1.6),
  "gpt-4.1-nano": openai(0.1, 0.025, 0.4),
  "gpt-4o": openai(2.5, 1.25, 10),
  "gpt-4o-mini": openai(0.15, 0.075, 0.6),
  "o1": openai(15, 7.5, 60),
  "o1-mini": openai(1.1, 0.55, 4.4),
  "o3": openai(2, 0.5, 8),
  "o3-mini": openai(1.1, 0.55, 4.4),
  "o4-mini": openai(1.1, 0.275, 4.4),
  // Responses-only models, taken 2026-12-07 from OpenAI's model pages (developers.openai.com/api/docs/models):
  // o1-pro and o3-pro list no cached-input price, so cached reads cost the input price.
  "gpt-5-codex": openai(1.25, 0.125, 10),
  "gpt-5.1-codex": openai(1.25, 0.125, 10),
  "gpt-5.1-codex-max": openai(1.25, 0.125, 10),
  "o1-pro": openai(150, 150, 600),
  "o3-pro": openai(20, 20, 80),
  "claude-opus-4-5": anthropic(5, 6.25, 0.5, 25),
  "claude-opus-4-1": anthropic(15, 18.75, 1.5, 75),
  "claude-opus-4": anthropic(15, 18.75, 1.5, 75),
  "claude-sonnet-4-5": anthropic(3, 3.75, 0.3, 15),
  "claude-sonnet-4": anthropic(3, 3.75, 0.3, 15),
  "claude-3-7-sonnet": anthropic(3, 3.75, 0.3, 15),
  "claude-3-5-sonnet": anthropic(3, 3.75, 0.3, 15),
  "claude-haiku-4-5": anthropic(1, 1.25, 0.1, 5),
  "claude-3-5-haiku": anthropic(0.8, 1, 0.08, 4),
  "claude-3-haiku": anthropic(0.25, 0.3, 0.03, 1.25),
  "claude-3-opus": anthropic(15, 18.75, 1.5, 75),
};

/**
 * What a model id names in the table: a router's vendor prefix (`openai/gpt-4.1`, Bedrock's
 * `us.anthropic.claude-…`) and a snapshot or version suffix (`-2025-04-14`, `-20250514`, `@20250514`,
 * `-latest`, `-v1:0`) are not part of it. Any other suffix (`gpt-4o-audio-preview`) is another model.
 */
export function priceKey(model: string): string {
  let key = model.trim().toLowerCase();
  key = key.slice(key.lastIndexOf("/") + 1);
  const vendor = /^(?:[a-z]{2,4}\.)?(?:anthropic|openai)\./.exec(key);
  if (vendor) key = key.slice(vendor[0].length);
  let previous;
  do {
    previous = key;
    key = key.replace(/(?:-v\d+(?::\d+)?|[-@]\d{8}|-\d{4}-\d{2}-\d{2}|-latest)$/, "");
  } while (key !== previous);
  return key;
}

/** The listed price of a model, or null when the table does not know it. */
export function listedPrice(model: string): Price | null {
  return TABLE[priceKey(model)] ?? null;
}

/** A `model.pricing` override: cached reads and cache writes cost the input price unless it says. */
export function priceOf(
  pricing: {
    input: number;
    output: number;
    cached_input?: number | undefined;
    cache_write?: number | undefined;
  },
): Price {
  return {
    input: pricing.input,
    output: pricing.output,
    cached_input: pricing.cached_input ?? pricing.input,
    cache_write: pricing.cache_write ?? pricing.input,
  };
}

/** USD of one call's usage; cache reads and writes are part of `prompt_tokens`, billed at their prices. */
export function costOf(usage: Usage, price: Price): number {
  const cached = usage.cached_tokens ?? 0;
  const written = usage.cache_write_tokens ?? 0;
  const uncached = Math.max(0, usage.prompt_tokens - cached - written);
  return (uncached * price.input + cached * price.cached_input + written * price.cache_write +
    usage.completion_tokens * price.output) / 1_000_000;
}
