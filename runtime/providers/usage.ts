/** A reply's token counts as Hermes keeps them, from what an OpenAI API reports (Chat Completions and Responses name them differently). */
import type { Usage } from "../core/types.ts";

type Count = number | null | undefined;

/** Absent counts are 0; `reasoning_tokens` is left out when the server counted none. */
export function tokenUsage(prompt: Count, completion: Count, cached?: Count, reasoning?: Count): Usage {
  return {
    prompt_tokens: prompt ?? 0,
    completion_tokens: completion ?? 0,
    cached_tokens: cached ?? 0,
    ...(reasoning ? { reasoning_tokens: reasoning } : {}),
  };
}
